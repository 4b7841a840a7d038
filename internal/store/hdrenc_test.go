package store

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// libEncode is the reference: hdrhistogram-go's own V2 compressed encoding.
func libEncode(t testing.TB, h *hdrhistogram.Histogram) string {
	t.Helper()
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatalf("library Encode: %v", err)
	}
	return string(b)
}

// inner checks the outer framing of a V2 compressed encoding and returns the
// inflated inner encoding (header and payload).
func inner(t *testing.T, enc string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatalf("base64: %v", err)
	}
	if len(b) < 8 {
		t.Fatalf("encoding is %d bytes", len(b))
	}
	if c := int32(binary.BigEndian.Uint32(b)); c != hdrhistogram.V2CompressedEncodingCookieBase|0x10 {
		t.Fatalf("compressed cookie %#x", c)
	}
	if n := int(binary.BigEndian.Uint32(b[4:])); n != len(b)-8 {
		t.Fatalf("compressed length field %d, zlib stream is %d bytes", n, len(b)-8)
	}
	zr, err := zlib.NewReader(bytes.NewReader(b[8:]))
	if err != nil {
		t.Fatalf("zlib: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflating: %v", err)
	}
	return raw
}

type histCase struct {
	name string
	h    *hdrhistogram.Histogram
}

func record(t testing.TB, h *hdrhistogram.Histogram, v, n int64) {
	t.Helper()
	if err := h.RecordValues(v, n); err != nil {
		t.Fatalf("RecordValues(%d, %d): %v", v, n, err)
	}
}

// logUniform returns n values spread evenly in log space over Headroom's
// whole latency range, 1 µs to 60 s.
func logUniform(r *rand.Rand, n int) []int64 {
	vs := make([]int64, n)
	top := math.Log(HistHighestMicros)
	for i := range vs {
		vs[i] = int64(math.Exp(r.Float64() * top))
	}
	return vs
}

// logNormal returns n latency-like values: median medianUs, log-sd sigma,
// clamped to Headroom's range.
func logNormal(r *rand.Rand, n int, medianUs, sigma float64) []int64 {
	vs := make([]int64, n)
	for i := range vs {
		v := int64(medianUs * math.Exp(sigma*r.NormFloat64()))
		vs[i] = min(max(v, HistLowestMicros), HistHighestMicros)
	}
	return vs
}

func histCases(t testing.TB) []histCase {
	var cs []histCase
	add := func(name string, h *hdrhistogram.Histogram) { cs = append(cs, histCase{name, h}) }
	newH := func(vs ...int64) *hdrhistogram.Histogram {
		h := NewHistogram()
		for _, v := range vs {
			record(t, h, v, 1)
		}
		return h
	}

	add("empty", NewHistogram())
	add("one value", newH(1234))
	add("lowest", newH(HistLowestMicros))
	add("highest", newH(HistHighestMicros))
	add("zero", newH(0))
	add("lowest and highest", newH(HistLowestMicros, HistHighestMicros))
	add("two adjacent buckets", newH(100, 101))

	// Every power of two and its neighbours across the range, then every
	// bucket of the range filled (no zero runs at all).
	pow := NewHistogram()
	for v := int64(1); v <= HistHighestMicros; v *= 2 {
		for _, w := range []int64{v - 1, v, v + 1} {
			if w >= HistLowestMicros && w <= HistHighestMicros {
				record(t, pow, w, 1)
			}
		}
	}
	add("powers of two", pow)
	dense := NewHistogram()
	for v := int64(1); v <= HistHighestMicros; v += max(1, v/4096) {
		record(t, dense, v, 1+v%7)
	}
	add("every bucket", dense)

	r := rand.New(rand.NewPCG(1, 2))
	spread := NewHistogram()
	for _, v := range logUniform(r, 100_000) {
		record(t, spread, v, 1)
	}
	record(t, spread, HistLowestMicros, 1)
	record(t, spread, HistHighestMicros, 1)
	add("spread over 1us..60s", spread)

	lat := NewHistogram()
	for _, v := range logNormal(r, 10_000, 2000, 1) {
		record(t, lat, v, 1)
	}
	add("latency-like", lat)

	// Counts of every varint length, up to the nine-byte form.
	wide := NewHistogram()
	for i := range 9 {
		record(t, wide, int64(10+i*1000), int64(1)<<(7*i))
		record(t, wide, int64(11+i*1000), int64(1)<<(7*i)-1)
	}
	add("varint widths", wide)
	big := NewHistogram()
	record(t, big, 5000, math.MaxInt64-100) // ninth varint byte above 0x7f
	record(t, big, 7, 100)
	add("huge counts", big)

	// Other geometries and a non-default conversion ratio: the encoder is
	// generic even though the store only builds NewHistogram's geometry.
	other := hdrhistogram.New(1, 3_600_000_000, 2)
	for _, v := range logUniform(r, 5000) {
		record(t, other, v, 3)
	}
	add("1..1h, 2 digits", other)
	fine := hdrhistogram.New(1000, 10_000_000_000, 5)
	for _, v := range logNormal(r, 5000, 2e6, 1.5) {
		record(t, fine, max(v, 1000), 1)
	}
	add("1000..1e10, 5 digits", fine)
	snap := lat.Export()
	snap.IntegerToDoubleConversionRatio = 0.001
	add("conversion ratio", hdrhistogram.Import(snap))

	for i := range 200 {
		h := NewHistogram()
		n := r.IntN(3000)
		if i%10 == 0 {
			n = 0
		}
		cluster := r.Float64() < 0.5
		median := math.Exp(r.Float64() * math.Log(HistHighestMicros))
		for range n {
			var v int64
			if cluster {
				v = logNormal(r, 1, median, 0.3*r.Float64())[0]
			} else {
				v = logUniform(r, 1)[0]
			}
			c := int64(1)
			if r.IntN(4) == 0 {
				c = r.Int64N(int64(1) << r.IntN(40))
			}
			record(t, h, v, c)
		}
		add(fmt.Sprintf("random %d", i), h)
	}
	return cs
}

var testQuantiles = []float64{0, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100}

func TestEncodeHistRoundTrip(t *testing.T) {
	for _, c := range histCases(t) {
		t.Run(c.name, func(t *testing.T) {
			enc, err := encodeHist(c.h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := hdrhistogram.Decode([]byte(enc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !got.Equals(c.h) { // geometry, total and every bucket
				t.Fatalf("decoded histogram differs")
			}
			if got.TotalCount() != c.h.TotalCount() || got.Min() != c.h.Min() || got.Max() != c.h.Max() ||
				got.Mean() != c.h.Mean() {
				t.Errorf("decoded count/min/max/mean %d/%d/%d/%v, want %d/%d/%d/%v",
					got.TotalCount(), got.Min(), got.Max(), got.Mean(),
					c.h.TotalCount(), c.h.Min(), c.h.Max(), c.h.Mean())
			}
			gq, wq := got.ValueAtPercentilesSlice(testQuantiles), c.h.ValueAtPercentilesSlice(testQuantiles)
			for i := range gq {
				if gq[i] != wq[i] {
					t.Errorf("p%v = %d, want %d", testQuantiles[i], gq[i], wq[i])
				}
			}
			gs, ws := got.Export(), c.h.Export()
			if gs.LowestTrackableValue != ws.LowestTrackableValue || gs.HighestTrackableValue != ws.HighestTrackableValue ||
				gs.SignificantFigures != ws.SignificantFigures || !equalCounts(gs.Counts, ws.Counts) {
				t.Errorf("decoded snapshot differs")
			}
			if g, w := ratio(gs), ratio(ws); g != w {
				t.Errorf("conversion ratio %v, want %v", g, w)
			}
		})
	}
}

// ratio is a snapshot's conversion ratio, with the library's 0 for "unset"
// read as the 1 it stands for.
func ratio(s *hdrhistogram.Snapshot) float64 {
	if s.IntegerToDoubleConversionRatio == 0 {
		return 1
	}
	return s.IntegerToDoubleConversionRatio
}

func equalCounts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEncodeHistMatchesLibrary checks that our encoding carries exactly what
// the library's does: the inflated inner encodings (header and counts
// payload) are byte-identical, and both decode to the same histogram. Only the
// deflate stream differs, by compression level.
func TestEncodeHistMatchesLibrary(t *testing.T) {
	for _, c := range histCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ours, err := encodeHist(c.h)
			if err != nil {
				t.Fatal(err)
			}
			lib := libEncode(t, c.h)
			if oi, li := inner(t, ours), inner(t, lib); !bytes.Equal(oi, li) {
				t.Fatalf("inner encoding differs from the library's:\nours %x\nlib  %x", head(oi), head(li))
			}
			ho, err := hdrhistogram.Decode([]byte(ours))
			if err != nil {
				t.Fatal(err)
			}
			hl, err := hdrhistogram.Decode([]byte(lib))
			if err != nil {
				t.Fatal(err)
			}
			if !ho.Equals(hl) || !hl.Equals(ho) {
				t.Fatalf("our encoding and the library's decode to different histograms")
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 96)] }

func TestEncodeHistNil(t *testing.T) {
	enc, err := encodeHist(nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hdrhistogram.Decode([]byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	if !h.Equals(NewHistogram()) {
		t.Fatalf("nil histogram does not decode to an empty one")
	}
	if want, _ := encodeHist(NewHistogram()); enc != want {
		t.Errorf("nil and empty histograms encode differently")
	}
}

func TestAppendZigZag(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 63, -64, 64, -65, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for s := range 64 {
		vals = append(vals, int64(1)<<s, int64(1)<<s-1, -(int64(1) << s), -(int64(1)<<s - 1))
	}
	for _, v := range vals {
		b := appendZigZag(nil, v)
		if len(b) > 9 {
			t.Fatalf("%d: %d bytes", v, len(b))
		}
		// Decode by the format's definition: 7 bits a byte for up to eight
		// bytes while the high bit is set, then a ninth byte of 8 bits.
		var u uint64
		n := 0
		for ; n < 8; n++ {
			u |= uint64(b[n]&0x7f) << (7 * n)
			if b[n]&0x80 == 0 {
				break
			}
		}
		if n == 8 {
			u |= uint64(b[8]) << 56
		}
		if n < 8 && n != len(b)-1 || n == 8 && len(b) != 9 {
			t.Fatalf("%d: malformed varint %x", v, b)
		}
		if got := int64(u>>1) ^ -int64(u&1); got != v {
			t.Errorf("%d encodes as %x, which decodes to %d", v, b, got)
		}
	}
}

// TestEncodeHistConcurrent exercises the encoder pool from many goroutines
// (meaningful under -race).
func TestEncodeHistConcurrent(t *testing.T) {
	cs := histCases(t)[:20]
	want := make([]string, len(cs))
	for i, c := range cs {
		want[i], _ = encodeHist(c.h)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 50 {
				i := (g + k) % len(cs)
				got, err := encodeHist(cs[i].h)
				if err != nil || got != want[i] {
					t.Errorf("%s: concurrent encoding differs (%v)", cs[i].name, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestEncodeHistKeepsEncoderAcrossGC checks that the zlib writer and buffers
// survive garbage collections (a sync.Pool would drop them): an encoding then
// allocates only the counts snapshot and the result, not a new ~1 MB writer.
func TestEncodeHistKeepsEncoderAcrossGC(t *testing.T) {
	h := NewHistogram()
	for _, v := range logNormal(rand.New(rand.NewPCG(7, 8)), 10_000, 2000, 1) {
		record(t, h, v, 1)
	}
	if _, err := encodeHist(h); err != nil { // warm the cache
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := encodeHist(h); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Export's copy of the counts is 139 KB; a new encoder would add ~1.2 MB.
	if n := after.TotalAlloc - before.TotalAlloc; n > 400<<10 {
		t.Errorf("encoding after two GCs allocated %d bytes", n)
	}
}

// benchHists are 10,000-value histograms: latency-like (log-normal, median
// 2 ms) and spread evenly in log space over 1 µs..60 s (the wide case).
func benchHists(b *testing.B) []histCase {
	r := rand.New(rand.NewPCG(3, 4))
	lat, spread := NewHistogram(), NewHistogram()
	for _, v := range logNormal(r, 10_000, 2000, 1) {
		record(b, lat, v, 1)
	}
	for _, v := range logUniform(r, 10_000) {
		record(b, spread, v, 1)
	}
	return []histCase{{"latency", lat}, {"spread", spread}}
}

// BenchmarkEncodeHist compares the library's Encode with ours (pooled, at
// hdrZlibLevel), and our encoder at other deflate levels. text-bytes is the
// stored base64 text's length.
func BenchmarkEncodeHist(b *testing.B) {
	for _, c := range benchHists(b) {
		b.Run(c.name+"/library", func(b *testing.B) {
			b.ReportAllocs()
			var s string
			for b.Loop() {
				s = libEncode(b, c.h)
			}
			b.ReportMetric(float64(len(s)), "text-bytes")
		})
		b.Run(c.name+"/ours", func(b *testing.B) {
			b.ReportAllocs()
			var s string
			for b.Loop() {
				var err error
				if s, err = encodeHist(c.h); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(s)), "text-bytes")
		})
		for _, lv := range []struct {
			name  string
			level int
		}{{"HuffmanOnly", zlib.HuffmanOnly}, {"BestSpeed", zlib.BestSpeed}, {"Default", zlib.DefaultCompression}, {"BestCompression", zlib.BestCompression}} {
			b.Run(c.name+"/ours-"+lv.name, func(b *testing.B) {
				e := newHdrEncoder(lv.level)
				b.ReportAllocs()
				var s string
				for b.Loop() {
					var err error
					if s, err = e.encode(c.h); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(s)), "text-bytes")
			})
		}
	}
}

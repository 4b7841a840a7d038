package store

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// hdrDecoder decodes stored histograms (the V2 compressed encoding of
// hdrenc.go) into one histogram it reuses: hdrhistogram.Decode builds a
// new full-range histogram (about 200 KB of counts) and a new zlib reader
// for every interval, and a reader that streams a long run's intervals
// would spend most of its time and memory on them. A decoder is used by
// one goroutine at a time; the histogram Decode returns is valid until
// the next call.
type hdrDecoder struct {
	raw   []byte // the base64-decoded outer encoding
	inner []byte // the inflated inner encoding
	zr    io.ReadCloser
	src   bytes.Reader
	h     *hdrhistogram.Histogram // NewHistogram's layout, reset per call
	// pairs are the non-zero buckets of the last histogram decoded on the
	// fast path (nil after a fallback to the library): merging them costs
	// a few dozen additions where the library's Merge walks every bucket.
	pairs []histPair
}

// histPair is one non-zero bucket: its lowest value and its count.
type histPair struct{ v, c int64 }

func newHdrDecoder() *hdrDecoder { return &hdrDecoder{h: NewHistogram()} }

// decode returns the histogram s encodes. A histogram of another layout
// than NewHistogram's (never written by Headroom, but valid) is decoded
// by the library into a new histogram.
func (d *hdrDecoder) decode(s string) (*hdrhistogram.Histogram, error) {
	d.pairs = d.pairs[:0]
	n := base64.StdEncoding.DecodedLen(len(s))
	if cap(d.raw) < n {
		d.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(d.raw[:n], []byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	raw := d.raw[:n]
	if len(raw) < 8 || int32(binary.BigEndian.Uint32(raw)) != hdrCompressedCookie {
		return d.fallback(s)
	}
	d.src.Reset(raw[8:])
	if d.zr == nil {
		if d.zr, err = zlib.NewReader(&d.src); err != nil {
			return nil, fmt.Errorf("decoding histogram: %w", err)
		}
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	buf := bytes.NewBuffer(d.inner[:0])
	if _, err := buf.ReadFrom(d.zr); err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	d.inner = buf.Bytes()
	in := d.inner
	if len(in) < hdrHeaderSize || int32(binary.BigEndian.Uint32(in)) != hdrCookie {
		return d.fallback(s)
	}
	payload := int(binary.BigEndian.Uint32(in[4:]))
	offset := int32(binary.BigEndian.Uint32(in[8:]))
	sig := int64(binary.BigEndian.Uint32(in[12:]))
	low := int64(binary.BigEndian.Uint64(in[16:]))
	high := int64(binary.BigEndian.Uint64(in[24:]))
	if offset != 0 || sig != d.h.SignificantFigures() || low != d.h.LowestTrackableValue() || high != d.h.HighestTrackableValue() {
		return d.fallback(s)
	}
	if payload > len(in)-hdrHeaderSize {
		return nil, errors.New("decoding histogram: the payload is shorter than its header says")
	}
	d.h.Reset()
	lay := newHdrLayout(sig, low)
	p := in[hdrHeaderSize : hdrHeaderSize+payload]
	for idx := int64(0); len(p) > 0; {
		c, n := readZigZag(p)
		if n == 0 {
			return nil, errors.New("decoding histogram: a count is cut short")
		}
		p = p[n:]
		if c < 0 { // a run of -c zero counts
			idx -= c
			continue
		}
		if c > 0 {
			v := lay.valueAt(idx)
			if err := d.h.RecordValues(v, c); err != nil {
				d.pairs = nil
				return nil, fmt.Errorf("decoding histogram: count %d at index %d: %w", c, idx, err)
			}
			d.pairs = append(d.pairs, histPair{v, c})
		}
		idx++
	}
	return d.h, nil
}

// fallback decodes s with the library, into a new histogram, leaving no
// pairs.
func (d *hdrDecoder) fallback(s string) (*hdrhistogram.Histogram, error) {
	d.pairs = nil
	return decodeHist(s)
}

// MergeInto adds the interval's histogram to dst, as dst.Merge(iv.Hist)
// does, and returns how many values dst could not hold. For an interval
// from Store.EachInterval it adds only the non-zero buckets the decoder
// saw: the library's Merge walks every bucket up to the largest value,
// which made merging a long run's intervals most of a report's time.
func (iv *Interval) MergeInto(dst *hdrhistogram.Histogram) (dropped int64) {
	if iv.Hist == nil {
		return 0
	}
	if iv.sparse == nil || dst.SignificantFigures() != HistSigFigs || dst.LowestTrackableValue() != HistLowestMicros {
		return dst.Merge(iv.Hist)
	}
	for _, p := range iv.sparse {
		if dst.RecordValues(p.v, p.c) != nil {
			dropped += p.c
		}
	}
	return dropped
}

// readZigZag reads one ZigZag LEB128 varint as appendZigZag writes it;
// n is 0 when p ends inside it.
func readZigZag(p []byte) (v int64, n int) {
	var u uint64
	for i := range 9 {
		if i >= len(p) {
			return 0, 0
		}
		b := p[i]
		if i == 8 {
			u |= uint64(b) << 56
			n = 9
			break
		}
		u |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			n = i + 1
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), n
}

// hdrLayout is the mapping from a counts index to the lowest value of
// its bucket, for a histogram of sig significant digits whose lowest
// discernible value is low (the HdrHistogram layout every implementation
// shares).
type hdrLayout struct {
	halfMag, unitMag uint
	halfCount        int64
}

func newHdrLayout(sig, low int64) hdrLayout {
	largest := 2 * int64(math.Pow10(int(sig)))
	mag := uint(math.Ceil(math.Log2(float64(largest))))
	half := max(mag, 1) - 1
	return hdrLayout{halfMag: half, unitMag: uint(bits.Len64(uint64(max(low, 1))) - 1), halfCount: 1 << half}
}

func (l hdrLayout) valueAt(idx int64) int64 {
	bucket := (idx >> l.halfMag) - 1
	sub := (idx & (l.halfCount - 1)) + l.halfCount
	if bucket < 0 {
		bucket, sub = 0, idx
	}
	return sub << (uint(bucket) + l.unitMag)
}

// CountAtMost is how many of the interval's values lie in buckets wholly
// at or below limit (a bucket's highest equivalent value at most limit):
// what an SLO threshold counts as within. For an interval from
// Store.EachInterval it reads the non-zero buckets the decoder saw; for
// another it walks the histogram.
func (iv *Interval) CountAtMost(limit int64) int64 {
	if iv.Hist == nil {
		return 0
	}
	var n int64
	if iv.sparse != nil && iv.Hist.SignificantFigures() == HistSigFigs && iv.Hist.LowestTrackableValue() == HistLowestMicros {
		for _, p := range iv.sparse {
			// v's bucket ends at or below limit exactly when limit+1 is
			// not in it (v ≤ limit, and a bucket is a range of values).
			if p.v <= limit && !iv.Hist.ValuesAreEquivalent(p.v, limit+1) {
				n += p.c
			}
		}
		return n
	}
	for _, b := range iv.Hist.Distribution() {
		if b.Count > 0 && b.To <= limit {
			n += b.Count
		}
	}
	return n
}

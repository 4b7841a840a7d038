package store

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"testing"
)

// FuzzHdrDecode feeds the store's histogram decoder stored encodings and
// arbitrary ones (a damaged or hostile store): it must return an error
// or a histogram, never panic, and what it returns must hold together:
// the non-zero buckets it keeps for merging (MergeInto, CountAtMost) sum
// to the histogram's count. Run it as go test -fuzz=FuzzHdrDecode
// -fuzztime=15s ./internal/store (docs/testing.md).
func FuzzHdrDecode(f *testing.F) {
	for _, vals := range [][]int64{{}, {1}, {250, 900, 900, 70_000}, {HistLowestMicros, HistHighestMicros}} {
		h := NewHistogram()
		for _, v := range vals {
			_ = h.RecordValue(v)
		}
		s, err := encodeHist(h)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(s))
	}
	// A compressed encoding whose inner header claims more payload than
	// it holds, and one whose counts run past the histogram's end.
	for _, payload := range [][]byte{{0x02}, bytes.Repeat([]byte{0x7f}, 64)} {
		var inner bytes.Buffer
		hdr := make([]byte, hdrHeaderSize)
		binary.BigEndian.PutUint32(hdr, uint32(hdrCookie))
		binary.BigEndian.PutUint32(hdr[4:], uint32(len(payload)+100))
		binary.BigEndian.PutUint32(hdr[12:], uint32(HistSigFigs))
		binary.BigEndian.PutUint64(hdr[16:], uint64(HistLowestMicros))
		binary.BigEndian.PutUint64(hdr[24:], uint64(HistHighestMicros))
		inner.Write(hdr)
		inner.Write(payload)
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		_, _ = zw.Write(inner.Bytes())
		_ = zw.Close()
		outer := make([]byte, 8, 8+z.Len())
		binary.BigEndian.PutUint32(outer, uint32(hdrCompressedCookie))
		binary.BigEndian.PutUint32(outer[4:], uint32(z.Len()))
		f.Add([]byte(base64.StdEncoding.EncodeToString(append(outer, z.Bytes()...))))
	}
	f.Add([]byte("not base64 at all"))
	d := newHdrDecoder()
	f.Fuzz(func(t *testing.T, s []byte) {
		if len(s) > 1<<16 {
			return
		}
		h, err := d.decode(string(s))
		if err != nil {
			return
		}
		if h == nil {
			t.Fatal("no error and no histogram")
		}
		if d.pairs == nil {
			return // decoded by the library, merged through it
		}
		var n int64
		for _, p := range d.pairs {
			n += p.c
		}
		if n != h.TotalCount() {
			t.Fatalf("the decoder's buckets hold %d values, its histogram %d", n, h.TotalCount())
		}
	})
}

package store

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// This file writes the standard HdrHistogram V2 compressed encoding, the
// format every HdrHistogram implementation reads (hdrhistogram.Decode, Java's
// decodeFromCompressedByteBuffer, C's hdr_decode_compressed, Python's
// decode). hdrhistogram-go's own Encode builds a new zlib writer at best
// compression for every histogram, which costs most of a millisecond; the
// store encodes every interval on the measuring machine while load runs, so
// it reuses writers and buffers instead.
//
// Layout (all integers big-endian):
//
//	outer, base64 (std) text:
//	  0  int32  compressed cookie (V2CompressedEncodingCookieBase | 0x10)
//	  4  int32  length of the zlib stream that follows
//	  8  ...    zlib stream of the inner encoding
//	inner:
//	  0  int32   cookie (V2EncodingCookieBase | 0x10)
//	  4  int32   payload length in bytes
//	  8  int32   normalizing index offset (0: counts are in logical order)
//	  12 int32   significant value digits
//	  16 int64   lowest discernible value
//	  24 int64   highest trackable value
//	  32 float64 integer-to-double conversion ratio
//	  40 ...     payload: the counts array up to its last non-zero count,
//	             each count a ZigZag LEB128 varint (at most 9 bytes, the ninth
//	             carrying 8 bits), a run of more than one zero written as the
//	             negated run length.

const (
	hdrCompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
	hdrCookie           = hdrhistogram.V2EncodingCookieBase | 0x10
	hdrHeaderSize       = 40

	// hdrZlibLevel is the deflate level of stored histograms. Measured on
	// 10,000-value histograms (BenchmarkEncodeHist), BestSpeed deflates 1.7x
	// (latency-like) to 3x (spread over the whole range) faster than
	// DefaultCompression, for 4% to 11% more bytes. DefaultCompression
	// compresses these payloads exactly as well as BestCompression.
	hdrZlibLevel = zlib.BestSpeed
)

// hdrEncoder holds the reusable state of one encoding: the inner encoding
// before compression, the outer encoding and its zlib writer (about 1 MB of
// deflate state, built on its first use), and the base64 text. An encoder is
// used by one goroutine at a time.
type hdrEncoder struct {
	raw []byte
	out bytes.Buffer
	zw  *zlib.Writer
	txt []byte
}

func newHdrEncoder(level int) *hdrEncoder {
	zw, err := zlib.NewWriterLevel(nil, level)
	if err != nil {
		panic(err) // only for a level outside zlib's range: a programming error
	}
	return &hdrEncoder{zw: zw}
}

// hdrEncoders keeps encoders between calls. It is not a sync.Pool: a pool is
// emptied by two garbage collections, and under high load, when the collector
// runs several times a second, nearly every interval batch would then build a
// new zlib writer, whose allocation alone costs about what the library's
// Encode does. The store encodes from one goroutine in practice; the channel
// keeps two encoders so that an occasional concurrent caller need not
// allocate either, and a caller that finds it empty builds its own.
var hdrEncoders = make(chan *hdrEncoder, 2)

// maxKeptBuf bounds the buffers a kept encoder holds on to, so that one
// unusually wide histogram (not one of NewHistogram's: those need at most
// about 200 KB) does not pin memory.
const maxKeptBuf = 1 << 20

// encodeHdrV2 returns h's V2 compressed encoding as base64 text.
func encodeHdrV2(h *hdrhistogram.Histogram) (string, error) {
	var e *hdrEncoder
	select {
	case e = <-hdrEncoders:
	default:
		e = newHdrEncoder(hdrZlibLevel)
	}
	s, err := e.encode(h)
	if cap(e.raw) > maxKeptBuf {
		e.raw = nil
	}
	if e.out.Cap() > maxKeptBuf {
		e.out = bytes.Buffer{}
	}
	if cap(e.txt) > maxKeptBuf {
		e.txt = nil
	}
	select {
	case hdrEncoders <- e:
	default:
	}
	return s, err
}

func (e *hdrEncoder) encode(h *hdrhistogram.Histogram) (string, error) {
	snap := h.Export()
	e.raw = appendHdrInner(e.raw[:0], snap)

	e.out.Reset()
	var head [8]byte
	binary.BigEndian.PutUint32(head[0:], uint32(hdrCompressedCookie))
	e.out.Write(head[:]) // length patched below
	e.zw.Reset(&e.out)
	if _, err := e.zw.Write(e.raw); err != nil {
		return "", fmt.Errorf("compressing histogram: %w", err)
	}
	if err := e.zw.Close(); err != nil {
		return "", fmt.Errorf("compressing histogram: %w", err)
	}
	b := e.out.Bytes()
	binary.BigEndian.PutUint32(b[4:8], uint32(len(b)-8))

	e.txt = base64.StdEncoding.AppendEncode(e.txt[:0], b)
	return string(e.txt), nil
}

// appendHdrInner appends the uncompressed inner encoding of snap to dst.
func appendHdrInner(dst []byte, snap *hdrhistogram.Snapshot) []byte {
	counts := snap.Counts
	// Counts are written up to the last non-zero one. An empty histogram
	// still writes its first (zero) count, as the reference encoders do.
	end := len(counts)
	for end > 0 && counts[end-1] == 0 {
		end--
	}
	if end == 0 && len(counts) > 0 {
		end = 1
	}

	start := len(dst)
	dst = append(dst, make([]byte, hdrHeaderSize)...)
	for i := 0; i < end; {
		c := counts[i]
		i++
		if c == 0 {
			run := int64(1)
			for i < end && counts[i] == 0 {
				run++
				i++
			}
			if run > 1 {
				c = -run
			}
		}
		dst = appendZigZag(dst, c)
	}

	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1 // the library's "unset"
	}
	hdr := dst[start : start+hdrHeaderSize]
	binary.BigEndian.PutUint32(hdr[0:], uint32(hdrCookie))
	binary.BigEndian.PutUint32(hdr[4:], uint32(len(dst)-start-hdrHeaderSize))
	binary.BigEndian.PutUint32(hdr[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(hdr[12:], uint32(snap.SignificantFigures))
	binary.BigEndian.PutUint64(hdr[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(hdr[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(hdr[32:], math.Float64bits(ratio))
	return dst
}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128 varint: seven bits
// a byte, low bits first, with the high bit set on every byte but the last;
// after eight such bytes the ninth holds the remaining eight bits whole, so
// a value never takes more than nine bytes.
func appendZigZag(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for range 8 {
		if u < 0x80 {
			return append(dst, byte(u))
		}
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

package workload

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// digitPairs holds "00", "01", ..., "99" as little-endian uint16 values.
var digitPairs = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()

// pow10 holds 10^0 .. 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decimalLen returns the number of decimal digits of v: floor(log10 v) + 1,
// with log10 v estimated as bitlen(v) * 1233/4096 (1233/4096 ~ log10 2) and
// corrected by one comparison.
func decimalLen(v uint64) int {
	t := bits.Len64(v) * 1233 >> 12
	if v < pow10[t] {
		return max(t, 1)
	}
	return t + 1
}

// appendDecimal appends the decimal form of v, like strconv.AppendUint(dst,
// v, 10), but writes in place and cuts v into 8-digit blocks whose four digit
// pairs are independent, shortening the chain of dependent divisions that a
// digit-pair loop has; keys of hashed records have 18-19 digits.
func appendDecimal(dst []byte, v uint64) []byte {
	const e8 = 100_000_000
	n := decimalLen(v)
	dst = slices.Grow(dst, n)
	l := len(dst)
	dst = dst[:l+n]
	b := dst[l:]
	i := n
	for v >= e8 {
		c := uint32(v % e8)
		v /= e8
		i -= 8
		hi, lo := c/10000, c%10000
		binary.LittleEndian.PutUint64(b[i:], uint64(digitPairs[hi/100])|uint64(digitPairs[hi%100])<<16|
			uint64(digitPairs[lo/100])<<32|uint64(digitPairs[lo%100])<<48)
	}
	c := uint32(v)
	for i >= 2 {
		i -= 2
		binary.LittleEndian.PutUint16(b[i:], digitPairs[c%100])
		c /= 100
	}
	if i == 1 {
		b[0] = '0' + byte(c)
	}
	return dst
}

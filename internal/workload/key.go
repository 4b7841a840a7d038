package workload

// KeyPrefix starts every record key, as in YCSB.
const KeyPrefix = "user"

// FNV-1a 64-bit parameters (Fowler, Noll and Vo).
const (
	fnvOffset64 = 0xcbf29ce484222325
	fnvPrime64  = 0x100000001b3

	fnvPrime64Pow4 = 0x9ffaac085635bc91 // fnvPrime64^4 mod 2^64
)

// ycsbHash is the hash YCSB applies to key numbers (seed-digest §1: hashed
// insert order, and the scrambling of the scrambled zipfian): FNV-1a 64 over
// the eight bytes of v, least significant first, then the absolute value of the
// result read as a signed 64-bit integer (YCSB takes Java's Math.abs). The one
// input whose hash is -2^63 maps to 2^63 here, where Java would keep it
// negative.
//
// Bytes that are zero leave h ^ 0 = h, so the four high bytes of a v below
// 2^32 (every key number of a realistic key space) reduce to one
// multiplication by prime^4.
func ycsbHash(v uint64) uint64 {
	h := uint64(fnvOffset64)
	n := 8
	if v>>32 == 0 {
		n = 4
	}
	for range n {
		h ^= v & 0xff
		h *= fnvPrime64
		v >>= 8
	}
	if n == 4 {
		h *= fnvPrime64Pow4
	}
	if int64(h) < 0 {
		h = -h
	}
	return h
}

// KeyName appends to dst the key of record keynum and returns the extended
// slice: "user" followed by the decimal form of keynum when ordered, else of
// ycsbHash(keynum) (YCSB's insertorder=hashed, its default), so that keys
// match YCSB's byte for byte and hashed keys spread over the key space. It
// allocates only when dst lacks room for the at most 24 bytes.
func KeyName(dst []byte, keynum uint64, ordered bool) []byte {
	if !ordered {
		keynum = ycsbHash(keynum)
	}
	dst = append(dst, KeyPrefix...)
	return appendDecimal(dst, keynum)
}

package workload

import "encoding/binary"

// fillValue overwrites dst with random printable bytes: 6 random bits per
// byte (YCSB's values carry 5), so that stores cannot compress them much.
//
// Eight bytes are made at once from one 64-bit word x (SWAR): each byte lane
// takes v = its low 6 bits, 0..63, and becomes
//
//	c = v + '>'        for v < 30  ('>' .. '[')
//	c = v + '>' + 1    for v >= 30 (']' .. '~')
//
// a 64-character alphabet that skips the backslash and contains no quote,
// space or control character, so values need no escaping in any store or
// text format. The test v >= 30 is the lane's top bit of v + (128-30); no lane
// ever carries into the next. The words come from a SplitMix64 sequence
// (Steele, Lea and Flood 2014) seeded by one draw from r: its state stays in a
// register and its outputs are independent of one another, which makes a
// 100-byte value about ten times cheaper than byte-by-byte generation.
func fillValue(dst []byte, r *rng) {
	s := r.u64()
	for len(dst) >= 8 {
		s += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(dst, printable(splitmixOut(s)))
		dst = dst[8:]
	}
	if len(dst) > 0 {
		c := printable(splitmixOut(s + 0x9e3779b97f4a7c15))
		for i := range dst {
			dst[i] = byte(c)
			c >>= 8
		}
	}
}

// printable maps the low 6 bits of each byte of x to the alphabet of
// fillValue.
func printable(x uint64) uint64 {
	const lanes = 0x0101010101010101
	v := x & (0x3f * lanes)
	ge30 := (v + (128-30)*lanes) & (0x80 * lanes) >> 7
	return v + '>'*lanes + ge30
}

// splitmixOut is the SplitMix64 output function of state s.
func splitmixOut(s uint64) uint64 {
	s = (s ^ s>>30) * 0xbf58476d1ce4e5b9
	s = (s ^ s>>27) * 0x94d049bb133111eb
	return s ^ s>>31
}

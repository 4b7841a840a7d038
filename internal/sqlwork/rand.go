package sqlwork

import (
	"math/bits"
	"strconv"
	"time"
)

// rnd is a small splitmix64 generator. The built-in data set seeds one per
// row from (seed, table, row), which makes every row a function of those
// three alone: chunks load in parallel, in any order, and the same seed
// gives the same data.
type rnd struct{ s uint64 }

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func rowRand(seed, table uint64, row int64) rnd {
	return rnd{s: mix64(seed^0x5851f42d4c957f2d) ^ mix64(table<<48^uint64(row))}
}

func (r *rnd) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// between returns an integer in [lo, hi].
func (r *rnd) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	h, _ := bits.Mul64(r.next(), uint64(hi-lo)+1)
	return lo + int64(h)
}

// pick returns one of choices.
func (r *rnd) pick(choices []string) string {
	return choices[r.between(0, int64(len(choices))-1)]
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// text appends between lo and hi random letters and digits to buf. Each
// 64-bit draw gives eight characters (successive base-62 digits of the
// draw's fraction).
func (r *rnd) text(buf []byte, lo, hi int) []byte {
	n := int(r.between(int64(lo), int64(hi)))
	for n > 0 {
		x := r.next()
		for k := 0; k < 8 && n > 0; k++ {
			var c uint64
			c, x = bits.Mul64(x, uint64(len(alnum)))
			buf = append(buf, alnum[c])
			n--
		}
	}
	return buf
}

// digits appends between lo and hi random decimal digits.
func (r *rnd) digits(buf []byte, lo, hi int) []byte {
	n := int(r.between(int64(lo), int64(hi)))
	for k := 0; k < n; k++ {
		buf = append(buf, byte('0'+r.between(0, 9)))
	}
	return buf
}

// appendDate appends day (days since 1970-01-01) as YYYY-MM-DD.
func appendDate(buf []byte, day int64) []byte {
	return time.Unix(day*86400, 0).UTC().AppendFormat(buf, time.DateOnly)
}

// appendTimestamp appends sec (seconds since 1970) as YYYY-MM-DD HH:MM:SS.
func appendTimestamp(buf []byte, sec int64) []byte {
	return time.Unix(sec, 0).UTC().AppendFormat(buf, time.DateTime)
}

// appendMoney appends an amount in hundredths as a decimal, e.g. 1234 ->
// 12.34.
func appendMoney(buf []byte, cents int64) []byte {
	if cents < 0 {
		buf = append(buf, '-')
		cents = -cents
	}
	buf = strconv.AppendInt(buf, cents/100, 10)
	c := cents % 100
	return append(buf, '.', byte('0'+c/10), byte('0'+c%10))
}

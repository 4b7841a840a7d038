package workload

import "math"

// The zipfian's one costly step is x^alpha (see zipfian.rank), on the
// critical path of every zipfian or latest Next. math.Pow (which for
// alpha = 100.00000000000009 takes both its exp/log path and its squaring
// loop), and even math.Exp with math.Log1p, are general-purpose and slow to
// deliver a result; these two table-driven functions cover only what rank
// needs, at a few units in the last place (fastmath_test.go), and took a
// zipfian Next from about 200 to about 115 ns on the development machine.

const (
	expTableBits = 6
	expTableSize = 1 << expTableBits
	logTableBits = 7
	logTableSize = 1 << logTableBits

	// ln 2 split so that k*ln2Hi is exact for the k that occur (Cody and
	// Waite): ln2Hi has 32 significant bits.
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

var (
	exp2Table [expTableSize]float64 // exp2Table[j] = 2^(j/64)
	logInv    [logTableSize]float64 // logInv[j] = 1/c_j for c_j = 1 + (j+0.5)/128, rounded
	logOfC    [logTableSize]float64 // logOfC[j] = -ln(logInv[j]), of the rounded value
)

func init() {
	for j := range exp2Table {
		exp2Table[j] = math.Exp2(float64(j) / expTableSize)
	}
	for j := range logInv {
		logInv[j] = 1 / (1 + (float64(j)+0.5)/logTableSize)
		logOfC[j] = -math.Log(logInv[j])
	}
}

// expNeg returns e^z for -700 <= z <= 0 (0 below): with z = (64k + j) ln2/64
// + r, |r| <= ln2/128, e^z = 2^k * 2^(j/64) * e^r, and e^r is its Taylor
// polynomial of degree 5 (remainder < r^6/720 < 4e-17).
func expNeg(z float64) float64 {
	if z < -700 {
		return 0
	}
	// Round z*64/ln2 to an integer by adding and subtracting 1.5*2^52:
	// the sum has no fraction bits left, and its low mantissa bits are n.
	const shifter = 0x1.8p52
	t := z*(expTableSize/math.Ln2) + shifter
	nf := t - shifter
	n := int64(math.Float64bits(t) - math.Float64bits(shifter))
	r := z - nf*(ln2Hi/expTableSize) - nf*(ln2Lo/expTableSize)
	r2 := r * r
	p := 1 + r + r2*(1.0/2+r*(1.0/6)) + r2*r2*(1.0/24+r*(1.0/120))
	scale := math.Float64frombits(uint64(1023+(n>>expTableBits)) << 52) // 2^k
	return exp2Table[n&(expTableSize-1)] * p * scale
}

// logPos returns ln v for a positive normal v: with v = 2^e * m, m in [1, 2),
// and c the centre of m's 1/128-wide bucket, ln v = e ln2 + ln c + ln(1+r)
// for r = m/c - 1, |r| < 1/256, and ln(1+r) is its Taylor polynomial of
// degree 6 (remainder < r^7/7 < 2e-18). The absolute error is about 1e-16,
// which after multiplying by alpha is the relative error of x^alpha.
func logPos(v float64) float64 {
	b := math.Float64bits(v)
	e := float64(int64(b>>52) - 1023)
	mb := b&(1<<52-1) | 1023<<52
	j := mb >> (52 - logTableBits) & (logTableSize - 1)
	r := math.Float64frombits(mb)*logInv[j] - 1
	r2 := r * r
	p := r - r2*(1.0/2) + r2*r*(1.0/3-r*(1.0/4)) + r2*r2*r*(1.0/5-r*(1.0/6))
	return e*ln2Hi + (logOfC[j] + p + e*ln2Lo)
}

package load

import (
	"math"
	"math/rand/v2"
)

// poissonCount draws a Poisson-distributed count with mean mu, in constant
// expected time whatever mu: the schedules' Skip uses it to count the
// arrivals of a stretch without drawing each gap. Small means multiply
// uniforms (Knuth); larger ones use Hörmann's transformed rejection with
// squeeze (PTRS, "The transformed rejection method for generating Poisson
// random variables", Insurance: Mathematics and Economics 12, 1993), exact
// for mu >= 10. Beyond 2^52 the count is mu itself: its relative spread,
// 1/sqrt(mu), is below float64's resolution there.
func poissonCount(r *rand.Rand, mu float64) int64 {
	switch {
	case !(mu > 0):
		return 0
	case mu < 10:
		limit, p := math.Exp(-mu), r.Float64()
		var k int64
		for p > limit {
			p *= r.Float64()
			k++
		}
		return k
	case mu > 1<<52:
		return int64(min(mu, maxArrivals))
	}
	smu := math.Sqrt(mu)
	b := 0.931 + 2.53*smu
	a := -0.059 + 0.02483*b
	invAlpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	logMu := math.Log(mu)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + mu + 0.43)
		if us >= 0.07 && v <= vr {
			return int64(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v*invAlpha/(a/(us*us)+b)) <= -mu+k*logMu-lg {
			return int64(k)
		}
	}
}

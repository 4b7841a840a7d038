package workload

import (
	"math"
	"testing"
)

// TestExpNeg: relative error below 1e-15 on the range rank uses.
func TestExpNeg(t *testing.T) {
	worst := 0.0
	for z := -60.0; z <= 0; z += 0.000123 {
		want := math.Exp(z)
		worst = math.Max(worst, math.Abs(expNeg(z)-want)/want)
	}
	if worst > 1e-15 {
		t.Errorf("expNeg: relative error up to %.3g", worst)
	}
	if expNeg(0) != 1 || expNeg(-800) != 0 {
		t.Errorf("expNeg(0) = %v, expNeg(-800) = %v", expNeg(0), expNeg(-800))
	}
}

// TestLogPos: absolute error below 4e-16 on [0.5, 2] (what rank needs: the
// error of alpha*ln v is the relative error of v^alpha), and relative error
// below 2e-15 outside it.
func TestLogPos(t *testing.T) {
	worstAbs, worstRel := 0.0, 0.0
	check := func(v float64) {
		want := math.Log(v)
		err := math.Abs(logPos(v) - want)
		if v >= 0.5 && v <= 2 {
			worstAbs = math.Max(worstAbs, err)
		} else {
			worstRel = math.Max(worstRel, err/math.Abs(want))
		}
	}
	for v := 1e-300; v <= 4; v *= 1.000317 {
		check(v)
	}
	for v := 0.9; v <= 1; v += 1e-7 {
		check(v)
	}
	if worstAbs > 4e-16 || worstRel > 2e-15 {
		t.Errorf("logPos: absolute error on [0.5, 2] up to %.3g, relative error elsewhere up to %.3g", worstAbs, worstRel)
	}
	t.Logf("logPos: absolute error on [0.5, 2] up to %.3g, relative error elsewhere up to %.3g", worstAbs, worstRel)
	if math.Abs(logPos(1)) > 1e-16 {
		t.Errorf("logPos(1) = %v", logPos(1))
	}
}

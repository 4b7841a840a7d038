package chart

import (
	"math"
	"strconv"
)

// Num is a number that may be undefined. Statistics of nothing (the p99 of
// an interval without requests, the standard error of one repetition) are
// NaN in Headroom's analyses; encoding/json cannot write NaN, so Num writes
// an undefined value as null, and a field tagged `omitzero` leaves it out.
type Num float64

// NaN is the undefined Num.
var NaN = Num(math.NaN())

// Defined reports whether n is a finite number.
func (n Num) Defined() bool {
	f := float64(n)
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}

// IsZero reports whether n is undefined. It exists for `omitzero`, which
// must leave out unknown values, never a measured 0.
func (n Num) IsZero() bool { return !n.Defined() }

// MarshalJSON writes n as a JSON number, or null when undefined.
func (n Num) MarshalJSON() ([]byte, error) {
	if !n.Defined() {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

// UnmarshalJSON reads a JSON number, or null as undefined.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = NaN
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

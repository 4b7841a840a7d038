package spec

import (
	"math"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// integer reads a whole number; a float with no fraction (1e6) counts.
func (d *decoder) integer(n *yaml.Node, path string) (int64, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int":
			var i int64
			if n.Decode(&i) == nil {
				return i, true
			}
			d.fail(n.Line, path, "%s is too large; use a smaller number", truncate(n.Value, 40))
			return 0, false
		case "!!float":
			// go-yaml also tags integers beyond 64 bits as floats.
			var f float64
			if n.Decode(&f) == nil && f == math.Trunc(f) {
				if f >= -(1<<63) && f < 1<<63 {
					return int64(f), true
				}
				d.fail(n.Line, path, "%s is too large; use a smaller number", truncate(n.Value, 40))
				return 0, false
			}
		}
	}
	d.fail(n.Line, path, "expected a whole number, got %s", describe(n))
	return 0, false
}

// float reads a finite number.
func (d *decoder) float(n *yaml.Node, path string) (float64, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int", "!!float":
			var f float64
			if n.Decode(&f) == nil {
				if f-f == 0 { // false for NaN and ±Inf
					return f, true
				}
				d.fail(n.Line, path, "expected a finite number, got %s", describe(n))
				return 0, false
			}
		}
	}
	d.fail(n.Line, path, "expected a number, got %s", describe(n))
	return 0, false
}

// duration reads a Go duration string; a bare 0 is allowed because it is
// unambiguous, any other bare number is not because its unit is unknown.
func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int", "!!float":
			var f float64
			if n.Decode(&f) == nil && f == 0 {
				return 0, true
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				// ".inf" with a unit is no duration either (issue 36).
				d.fail(n.Line, path, "%s is not a length of time; give a duration like \"500ms\", \"10s\" or \"2m\"", truncate(n.Value, 40))
				return 0, false
			}
			v := truncate(n.Value, 40)
			d.fail(n.Line, path, "%s has no unit; write it with one, e.g. \"%ss\" or \"%sms\"", v, v, v)
			return 0, false
		case "!!str":
			dur, err := time.ParseDuration(n.Value)
			if err == nil {
				return dur, true
			}
			if _, numErr := strconv.ParseFloat(n.Value, 64); numErr == nil {
				v := truncate(n.Value, 40)
				d.fail(n.Line, path, "%q has no unit; write it with one, e.g. \"%ss\" or \"%sms\"", v, v, v)
				return 0, false
			}
		}
	}
	d.fail(n.Line, path, "expected a duration like \"500ms\", \"10s\" or \"2m\", got %s", describe(n))
	return 0, false
}

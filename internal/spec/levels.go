package spec

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxLevels bounds a level list so that a typo in a range cannot plan
// millions of runs.
const maxLevels = 10000

// levelRange is the {from, to, step} form of Levels.
type levelRange struct {
	From *float64 `yaml:"from"`
	To   *float64 `yaml:"to"`
	Step *float64 `yaml:"step"`
}

// levels decodes a list of numbers or a range mapping into v (a Levels).
func (d *decoder) levels(n *yaml.Node, path string, v reflect.Value) {
	lv := Levels{Line: d.lines[path]}
	switch n.Kind {
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			d.fail(n.Line, path, "the list is empty; give at least one level, e.g. [100, 200, 400]")
			return
		}
		if len(n.Content) > maxLevels {
			d.fail(n.Line, path, "%d levels is more than the %d allowed; split the campaign", len(n.Content), maxLevels)
			return
		}
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			it := resolve(item)
			if it == nil || isNull(it) {
				d.fail(item.Line, p, "empty list item; give it a number or remove it")
				continue
			}
			d.lines[p] = it.Line
			if f, ok := d.float(it, p); ok {
				lv.Values = append(lv.Values, f)
			}
		}
	case yaml.MappingNode:
		if isRelative(n) { // relative.go
			r, ok := d.relative(n, path)
			if !ok {
				return
			}
			lv.Values, lv.Relative = slices.Clone(r.Fractions), r
			break
		}
		if isSweep(n) { // sweep.go
			sw, vals, ok := d.sweep(n, path)
			if !ok {
				return
			}
			lv.Values, lv.Sweep = vals, sw
			break
		}
		vals, ok := d.levelRange(n, path)
		if !ok {
			return
		}
		lv.Values = vals
	default:
		d.fail(n.Line, path, "expected a list like [100, 200, 400] or a range like {from: 100, to: 500, step: 100}, got %s", describe(n))
		return
	}
	v.Set(reflect.ValueOf(lv))
}

// levelRange expands {from, to, step}: from, from+step, ... up to and
// including to when to falls on a step (within float rounding).
func (d *decoder) levelRange(n *yaml.Node, path string) ([]float64, bool) {
	var r levelRange
	before := len(d.errs)
	d.structure(n, path, reflect.ValueOf(&r).Elem(), "")
	line := d.lines[path]
	for _, f := range []struct {
		name string
		v    *float64
	}{{"from", r.From}, {"to", r.To}, {"step", r.Step}} {
		if f.v == nil && !d.hasErrorAt(before, path+"."+f.name) {
			d.fail(line, path+"."+f.name, "required in a range; write {from: 100, to: 500, step: 100}")
		}
	}
	if len(d.errs) > before {
		return nil, false
	}
	from, to, step := *r.From, *r.To, *r.Step
	if step <= 0 {
		d.fail(d.lines[path+".step"], path+".step", "must be greater than 0, got %g", step)
		return nil, false
	}
	if from > to {
		d.fail(d.lines[path+".to"], path+".to", "%g is below from (%g); swap them or raise to", to, from)
		return nil, false
	}
	// The tolerance lets 0.1..0.3 step 0.1 include 0.3 although
	// (0.3-0.1)/0.1 is 1.9999999999999998 in floating point.
	steps := math.Floor((to-from)/step + 1e-9)
	if !(steps < maxLevels) { // also catches +Inf
		d.fail(line, path, "this range gives more than %d levels; use a larger step", maxLevels)
		return nil, false
	}
	vals := make([]float64, int(steps)+1)
	for i := range vals {
		vals[i] = roundLevel(from+float64(i)*step, step)
	}
	if last := &vals[len(vals)-1]; math.Abs(*last-to) <= 1e-9*step {
		*last = to
	}
	return vals, true
}

// hasErrorAt reports whether an error was recorded for path since index from.
func (d *decoder) hasErrorAt(from int, path string) bool {
	for _, e := range d.errs[from:] {
		if e.Path == path {
			return true
		}
	}
	return false
}

// roundLevel drops float noise such as 0.30000000000000004 from a computed
// level by keeping 12 significant digits, unless that would move it by more
// than a sliver of a step (huge levels keep their exact value).
func roundLevel(x, step float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil || math.Abs(r-x) > 1e-9*step {
		return x
	}
	return r
}

package spec

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// BottleneckAnalysis is analysis.bottleneck: the settings of the
// multi-bottleneck classification, the intervention analysis and the maps
// over configurations (docs/bottleneck.md; seed-digest §6). Zero values
// take the analyses' defaults.
type BottleneckAnalysis struct {
	// Lambda is the length of an observation interval (default 1s; at least
	// the monitor's sampling interval).
	Lambda Duration `yaml:"lambda"`
	// Alpha is the critical saturation threshold in percent (default 95).
	Alpha float64 `yaml:"alpha"`
	// Epsilon is the largest joint saturation frequency of two dependent
	// bottleneck resources (default 0.05).
	Epsilon float64 `yaml:"epsilon"`
	// Full and Partial bound the saturation frequency f_R of fully
	// (f_R >= Full, default 0.95) and partially (Partial < f_R < Full,
	// default 0.01) saturated resources.
	Full    float64 `yaml:"full"`
	Partial float64 `yaml:"partial"`
	// PerCore also classifies each core of a monitored host (default false).
	PerCore bool `yaml:"per_core"`
	// Hosts restricts the analyses to these hosts' resources (default:
	// every monitored host, including the machine that runs the lab).
	Hosts []string `yaml:"hosts"`
	// SLOFloor is the SLO satisfaction in percent whose lower confidence
	// bound ends the stable part of the sweep (default 90).
	SLOFloor float64 `yaml:"slo_floor"`
	// UtilFilter drops utilisation metrics that never exceed it, in percent
	// (default 90).
	UtilFilter float64 `yaml:"util_filter"`
	// StrictRules applies the intervention analysis's rule A only to
	// utilisations and rule B only to unbounded metrics (default true;
	// false applies both rules to every metric, as seed 003 did).
	StrictRules *bool `yaml:"strict_rules"`
	// Map names the two treatment fields whose values are the tier sizes
	// of the maximum-throughput and bottleneck maps.
	Map *BottleneckMap `yaml:"map"`
}

// BottleneckMap is analysis.bottleneck.map: the x and y axes.
type BottleneckMap struct {
	X MapAxis `yaml:"x"`
	Y MapAxis `yaml:"y"`
}

// MapAxis is one axis of the maps: a field path into each treatment's
// spec that holds a number (a tier's size), and its label.
type MapAxis struct {
	Path  string `yaml:"path"`  // e.g. lab.hosts[0].count
	Label string `yaml:"label"` // e.g. application servers; default: the path
}

// StrictRulesOn is StrictRules with its default.
func (b BottleneckAnalysis) StrictRulesOn() bool { return b.StrictRules == nil || *b.StrictRules }

// bottleneckAnalysis checks analysis.bottleneck; in a campaign with
// treatments it runs for each treatment's spec, so that every treatment
// must place itself on the map.
func (c *checker) bottleneckAnalysis(s *Spec, b *BottleneckAnalysis) {
	const p = "analysis.bottleneck."
	if d := b.Lambda.Duration; d < 0 || d > 0 && d < 100*time.Millisecond {
		c.fail(p+"lambda", "%v is out of range; give an interval of at least 100ms, e.g. 1s (or leave it out)", d)
	}
	for _, f := range []struct {
		name    string
		ok      bool
		example string
	}{
		{"alpha", b.Alpha > 0 && b.Alpha <= 100, "a utilisation in percent above 0, e.g. 95"},
		{"epsilon", b.Epsilon > 0 && b.Epsilon < 1, "a probability between 0 and 1, e.g. 0.05"},
		{"full", b.Full > 0 && b.Full <= 1, "a frequency above 0 and at most 1, e.g. 0.95"},
		{"partial", b.Partial >= 0 && b.Partial < 1, "a frequency from 0 to below 1, e.g. 0.01"},
		{"slo_floor", b.SLOFloor > 0 && b.SLOFloor <= 100, "a percentage of requests above 0, e.g. 90"},
		{"util_filter", b.UtilFilter >= 0 && b.UtilFilter <= 100, "a utilisation in percent, e.g. 90"},
	} {
		// A value left out is 0 and takes the default; a written one must
		// be in range.
		if c.has(p+f.name) && !f.ok {
			c.fail(p+f.name, "is out of range; give %s (or leave it out for the default)", f.example)
		}
	}
	if full := b.Full; b.Partial > 0 && b.Partial < 1 && (full == 0 && b.Partial >= 0.95 || full > 0 && full <= 1 && b.Partial >= full) {
		c.fail(p+"partial", "%v must be below full; partially saturated means Partial < f_R < Full", b.Partial)
	}
	for i, h := range b.Hosts {
		if h == "" || strings.ContainsAny(h, "/ ") {
			c.fail(fmt.Sprintf("%shosts[%d]", p, i), "%q is not a host name; name hosts as the monitor does, e.g. db1", h)
		}
	}
	if m := b.Map; m != nil {
		c.mapAxis(s, p+"map.x", m.X)
		c.mapAxis(s, p+"map.y", m.Y)
		if m.X.Path != "" && m.X.Path == m.Y.Path {
			c.fail(p+"map.y.path", "%s is also the x axis; give the two axes different fields", m.Y.Path)
		}
	}
}

// mapAxis checks that an axis's path names a positive number in s.
func (c *checker) mapAxis(s *Spec, p string, a MapAxis) {
	if a.Path == "" {
		c.fail(p+".path", "required: the field path of this tier's size in each treatment, e.g. lab.hosts[0].count")
		return
	}
	v, err := s.Number(a.Path)
	switch {
	case err != nil:
		c.fail(p+".path", "%v", err)
	case !(v > 0):
		c.fail(p+".path", "%s is %v here; write the tier's size (a positive number) in the spec or the treatment's set:, e.g. count: 1", a.Path, v)
	}
}

// Number returns the number a field path (as in a treatment's set:, e.g.
// lab.hosts[0].count or target.app.cpu_work) holds in s. A field that is
// not written holds its zero value; a duration is in seconds.
func (s *Spec) Number(path string) (float64, error) {
	v, err := s.valueAt(path)
	if err != nil {
		return 0, err
	}
	if v.Type() == reflect.TypeOf(Duration{}) {
		return v.Interface().(Duration).Seconds(), nil
	}
	if v.Type() == reflect.TypeOf(time.Duration(0)) {
		return time.Duration(v.Int()).Seconds(), nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return v.Float(), nil
	}
	return 0, fmt.Errorf("%s holds %v, not a number; point the axis at a number such as lab.hosts[0].count or lab.hosts[1].vcpus", path, v.Interface())
}

// valueAt follows a field path through the decoded spec by the fields'
// yaml names; target options are under target (target.app.pool).
func (s *Spec) valueAt(path string) (reflect.Value, error) {
	segs, err := splitPath(path)
	if err != nil {
		return reflect.Value{}, fmt.Errorf("%s: %v", path, err)
	}
	v := reflect.ValueOf(s).Elem()
	at := "the spec"
	for _, sg := range segs {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return reflect.Value{}, fmt.Errorf("%s: %s is not written, so %s has no value; write it in the spec", path, at, sg)
			}
			v = v.Elem()
		}
		switch {
		case sg.index >= 0:
			if v.Kind() != reflect.Slice {
				return reflect.Value{}, fmt.Errorf("%s: [%d] indexes %s, which is not a list", path, sg.index, at)
			}
			if sg.index >= v.Len() {
				return reflect.Value{}, fmt.Errorf("%s: %s has %d items, so [%d] does not exist", path, at, v.Len(), sg.index)
			}
			v = v.Index(sg.index)
		case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
			mv := v.MapIndex(reflect.ValueOf(sg.key).Convert(v.Type().Key()))
			if !mv.IsValid() {
				return reflect.Value{}, fmt.Errorf("%s: %s has no key %q", path, at, sg.key)
			}
			v = mv
		case v.Kind() == reflect.Struct:
			if v.Type() == reflect.TypeOf(Target{}) && sg.key != "type" {
				// The target type's own options.
				v = v.FieldByName("Options")
				for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
					if v.IsNil() {
						return reflect.Value{}, fmt.Errorf("%s: the target has no options", path)
					}
					v = v.Elem()
				}
			}
			f, ok := fieldByYAML(v, sg.key)
			if !ok {
				return reflect.Value{}, fmt.Errorf("%s: %s has no field %q", path, at, sg.key)
			}
			v = f
		default:
			return reflect.Value{}, fmt.Errorf("%s: %s is not a section with fields", path, at)
		}
		at = sg.String()
	}
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return reflect.Value{}, fmt.Errorf("%s is not written; write it in the spec", path)
		}
		v = v.Elem()
	}
	return v, nil
}

// fieldByYAML finds the struct field whose yaml name is key (an untagged
// field goes by its lower-cased name, as the decoder reads it).
func fieldByYAML(v reflect.Value, key string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if name == key {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

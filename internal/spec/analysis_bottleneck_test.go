package spec

import (
	"strings"
	"testing"
)

const bottleneckBase = `
name: b
target: {type: fake, cache_mb: 32, busy_timeout: 250ms}
workload: {ycsb: c}
load: {model: open, rates: [10]}
lab:
  hosts:
    - {name: app, count: 1, type: small}
    - {name: db, type: small, vcpus: 0.5}
`

func TestBottleneckAnalysisSettings(t *testing.T) {
	s := mustParse(t, bottleneckBase+`
analysis:
  bottleneck:
    lambda: 2s
    alpha: 90
    epsilon: 0.1
    full: 0.9
    partial: 0.02
    per_core: true
    hosts: [app1, db]
    slo_floor: 95
    util_filter: 80
    strict_rules: false
    map:
      x: {path: "lab.hosts[1].vcpus", label: DB vCPUs}
      y: {path: "lab.hosts[0].count", label: app servers}
treatments:
  - name: a1-d05
  - name: a2-d1
    set: {"lab.hosts[0].count": 2, "lab.hosts[1].vcpus": 1}
`)
	b := s.Analysis.Bottleneck
	if b.Lambda.Seconds() != 2 || b.Alpha != 90 || b.Epsilon != 0.1 || b.Full != 0.9 || b.Partial != 0.02 || !b.PerCore ||
		strings.Join(b.Hosts, ",") != "app1,db" || b.SLOFloor != 95 || b.UtilFilter != 80 || b.StrictRulesOn() {
		t.Fatalf("%+v", b)
	}
	if b.Map.X.Label != "DB vCPUs" || b.Map.Y.Path != "lab.hosts[0].count" {
		t.Fatalf("map %+v", b.Map)
	}
	want := map[string][2]float64{"a1-d05": {0.5, 1}, "a2-d1": {1, 2}}
	for _, tr := range s.Treatments {
		x, err := tr.Spec.Number(b.Map.X.Path)
		if err != nil {
			t.Fatal(err)
		}
		y, err := tr.Spec.Number(b.Map.Y.Path)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[tr.Name]; x != w[0] || y != w[1] {
			t.Errorf("%s: x %v y %v, want %v", tr.Name, x, y, w)
		}
	}
	if !mustParse(t, bottleneckBase).Analysis.Bottleneck.StrictRulesOn() {
		t.Fatal("strict_rules must default to true")
	}
}

func TestSpecNumber(t *testing.T) {
	s := mustParse(t, bottleneckBase)
	for path, want := range map[string]float64{
		"target.cache_mb":       32,
		"target.busy_timeout":   0.25,
		"lab.hosts[1].vcpus":    0.5,
		"seed":                  1,
		"workload.record_count": 1000,
	} {
		got, err := s.Number(path)
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", path, got, err, want)
		}
	}
	for path, want := range map[string]string{
		"lab.hosts[5].count": "has 2 items, so [5] does not exist",
		"lab.hosts[0].cores": `has no field "cores"`,
		"lab.hosts[0].type":  `holds small, not a number`,
		"slo.threshold":      "slo is not written",
		"target.nothing":     `has no field "nothing"`,
		"lab.hosts[0":        "unclosed [",
	} {
		if _, err := s.Number(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
}

func TestBottleneckAnalysisErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"alpha: 0", "analysis.bottleneck.alpha: is out of range"},
		{"alpha: 120", "analysis.bottleneck.alpha: is out of range"},
		{"epsilon: 1", "analysis.bottleneck.epsilon: is out of range"},
		{"full: 1.5", "analysis.bottleneck.full: is out of range"},
		{"partial: 0.96", "analysis.bottleneck.partial: 0.96 must be below full"},
		{"full: 0.5\n    partial: 0.6", "analysis.bottleneck.partial: 0.6 must be below full"},
		{"slo_floor: 0", "analysis.bottleneck.slo_floor: is out of range"},
		{"lambda: 10ms", "analysis.bottleneck.lambda: 10ms is out of range"},
		{"hosts: [a/b]", `analysis.bottleneck.hosts[0]: "a/b" is not a host name`},
		{"map: {x: {path: \"lab.hosts[1].vcpus\"}}", "analysis.bottleneck.map.y.path: required"},
		{"map: {x: {path: \"lab.hosts[1].vcpus\"}, y: {path: \"lab.hosts[1].vcpus\"}}", "is also the x axis"},
		{"map: {x: {path: \"lab.hosts[0].vcpus\"}, y: {path: \"lab.hosts[1].vcpus\"}}", "analysis.bottleneck.map.x.path: lab.hosts[0].vcpus is 0 here"},
		{"map: {x: {path: \"lab.hosts[0].type\"}, y: {path: \"lab.hosts[1].vcpus\"}}", "not a number"},
	} {
		_, err := Parse("s.yaml", []byte(bottleneckBase+"analysis:\n  bottleneck:\n    "+c.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.yaml, err, c.want)
		}
	}
	// Each treatment must place itself on the map.
	_, err := Parse("s.yaml", []byte(bottleneckBase+`analysis:
  bottleneck:
    map: {x: {path: "lab.hosts[1].vcpus"}, y: {path: "lab.hosts[0].count"}}
treatments:
  - {name: ok}
  - {name: bad, set: {"lab.hosts[0].count": 0}}
`))
	if err == nil || !strings.Contains(err.Error(), "analysis.bottleneck.map.y.path: in treatment bad: lab.hosts[0].count is 0 here") {
		t.Fatalf("error %v", err)
	}
}

package spec

import (
	"strings"
	"testing"
	"time"
)

func TestVariabilitySettings(t *testing.T) {
	s := mustParse(t, base+`analysis:
  variability:
    repeat_se: 2ms
    cross_diff: 40ms
    trim: 0s
    host: db1
    equal: [[a, b]]
    policies: {a: restore, b: repopulate}
treatments:
  - name: a
  - name: b
`)
	v := s.Analysis.Variability
	if v.RepeatSE.Duration != 2*time.Millisecond || v.CrossDiff.Duration != 40*time.Millisecond || v.TrimOrDefault() != 0 ||
		v.Host != "db1" || len(v.Equal) != 1 || v.Equal[0][1] != "b" || v.Policies["a"] != "restore" {
		t.Fatalf("decoded %+v", v)
	}
	if errs := CheckVariabilityNames("t.yaml", s); len(errs) != 0 {
		t.Errorf("names of existing treatments: %v", errs)
	}
	if got := (VariabilityAnalysis{}).TrimOrDefault(); got != 30*time.Second {
		t.Errorf("default trim %v, want seed 001's 30s", got)
	}
}

func TestVariabilitySettingErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"analysis: {variability: {repeat_se: -1ms}}", "analysis.variability.repeat_se: must not be negative"},
		{"analysis: {variability: {trim: -5s}}", "analysis.variability.trim: must not be negative"},
		{"analysis: {variability: {equal: [[a]]}}", "analysis.variability.equal[0]: a group of equal instances needs at least two"},
		{"analysis: {variability: {equal: [[a, b], [b, c]]}}", "analysis.variability.equal[1]: treatment b is already in group 0"},
		{"analysis: {variability: {policies: {a: restor}}}", `analysis.variability.policies.a: unknown value "restor"; did you mean "restore"?`},
		{"analysis: {variability: {hosts: {a: \"\"}}}", "analysis.variability.hosts.a: names no host"},
	} {
		lines := parseErrors(t, base+c.src+"\n")
		if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: %v, want %q", c.src, lines, c.want)
		}
	}
}

func TestVariabilityNamesAndPolicies(t *testing.T) {
	// Parse refuses names that are not treatments.
	_, err := Parse("t.yaml", []byte(base+`reset: none
analysis:
  variability:
    equal: [[a, z]]
    hosts: {y: db1}
treatments:
  - name: a
  - name: b
    set: {reset: restart}
`))
	if err == nil || !strings.Contains(err.Error(), `analysis.variability.equal[0]: "z" is not a treatment; use one of a, b`) ||
		!strings.Contains(err.Error(), `analysis.variability.hosts: "y" is not a treatment`) {
		t.Errorf("errors %v", err)
	}
	s := mustParse(t, base+`reset: none
treatments:
  - name: a
  - name: b
    set: {reset: restart}
`)
	// Without policies:, treatments that reset differently are compared by
	// their own reset settings; treatments that reset alike are not.
	pol := s.Analysis.Variability.PoliciesFor(s.Treatments)
	if len(pol) != 2 || pol["a"] != "none" || pol["b"] != "restart" {
		t.Errorf("derived policies %v", pol)
	}
	same := mustParse(t, base+"treatments: [{name: a}, {name: b}]\n")
	if pol := same.Analysis.Variability.PoliciesFor(same.Treatments); pol != nil {
		t.Errorf("treatments that reset alike: policies %v, want none", pol)
	}
}

func TestVariabilityThresholdsMode(t *testing.T) {
	s := mustParse(t, base+"analysis: {variability: {repeat_pct: 3, cross_pct: 15, alpha: 0.01}}\n")
	v := s.Analysis.Variability
	if v.RepeatPct != 3 || v.CrossPct != 15 || v.Alpha != 0.01 || v.ThresholdsMode() != ThresholdsRelative {
		t.Errorf("relative settings decoded %+v, mode %s", v, v.ThresholdsMode())
	}
	for _, c := range []struct {
		v    VariabilityAnalysis
		want string
	}{
		{VariabilityAnalysis{}, ThresholdsRelative},
		// A spec that writes seed 001's durations means them.
		{VariabilityAnalysis{CrossDiff: Duration{30 * time.Millisecond}}, ThresholdsAbsolute},
		{VariabilityAnalysis{Thresholds: ThresholdsAbsolute}, ThresholdsAbsolute},
	} {
		if got := c.v.ThresholdsMode(); got != c.want {
			t.Errorf("%+v: mode %s, want %s", c.v, got, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"analysis: {variability: {thresholds: absolut}}", `analysis.variability.thresholds: unknown value "absolut"; did you mean "absolute"?`},
		{"analysis: {variability: {thresholds: relative, repeat_se: 5ms}}", "analysis.variability.thresholds: is relative, but repeat_se or cross_diff"},
		{"analysis: {variability: {thresholds: absolute, cross_pct: 20}}", "analysis.variability.thresholds: is absolute, but repeat_pct"},
		{"analysis: {variability: {cross_diff: 30ms, cross_pct: 20}}", "analysis.variability: mixes absolute thresholds"},
		{"analysis: {variability: {repeat_pct: -1}}", "analysis.variability.repeat_pct: must be a percentage of tau"},
		{"analysis: {variability: {alpha: 0.5}}", "analysis.variability.alpha: must be a significance level between 0 and 0.5"},
	} {
		lines := parseErrors(t, base+c.src+"\n")
		if len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%s: %v, want %q", c.src, lines, c.want)
		}
	}
}

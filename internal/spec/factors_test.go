package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Two factors of 2 and 3 values make 6 treatments, the last factor
// changing fastest, each named by its values and running the base spec with
// exactly its values set.
func TestFactorsExpandIntoAFullFactorial(t *testing.T) {
	s, err := Parse("t.yaml", []byte(treatmentBase+`
factors:
  - path: lab.hosts[0].type
    values: [small, large]
  - path: lab.hosts[0].volumes[0].iops
    values: [300, 900, 1800]
`))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name string
		typ  string
		iops float64
	}
	wants := []want{
		{"type-small_iops-300", "small", 300},
		{"type-small_iops-900", "small", 900},
		{"type-small_iops-1800", "small", 1800},
		{"type-large_iops-300", "large", 300},
		{"type-large_iops-900", "large", 900},
		{"type-large_iops-1800", "large", 1800},
	}
	if len(s.Treatments) != len(wants) {
		t.Fatalf("%d treatments, want %d", len(s.Treatments), len(wants))
	}
	for i, w := range wants {
		tr := s.Treatments[i]
		h := tr.Spec.Lab.Hosts[0]
		if tr.Name != w.name || h.Type != w.typ || h.Volumes[0].IOPS != w.iops {
			t.Errorf("treatment %d = %s (type %s, iops %v), want %+v", i, tr.Name, h.Type, h.Volumes[0].IOPS, w)
		}
		if !reflect.DeepEqual(tr.Set, []string{"lab.hosts[0].type", "lab.hosts[0].volumes[0].iops"}) {
			t.Errorf("%s sets %v", tr.Name, tr.Set)
		}
		if !reflect.DeepEqual(tr.Values, []string{w.typ, strings.TrimPrefix(w.name, "type-"+w.typ+"_iops-")}) {
			t.Errorf("%s values %v", tr.Name, tr.Values)
		}
		// Everything else is the base spec.
		if tr.Spec.Repetitions != 2 || len(tr.Spec.Plan()) != 4 || tr.Spec.Name != "t" {
			t.Errorf("%s changed more than its factors: %+v", tr.Name, tr.Spec)
		}
	}
	if s.Lab.Hosts[0].Type != "small" || s.Lab.Hosts[0].Volumes[0].IOPS != 300 {
		t.Error("the factors changed the base spec")
	}
	if len(s.Factors) != 2 || s.Factors[1].Name != "iops" || !reflect.DeepEqual(s.Factors[1].Values, []string{"300", "900", "1800"}) {
		t.Errorf("factors %+v", s.Factors)
	}
	if s.TreatmentOrder != "sequential" || s.Blocking != "treatment" {
		t.Errorf("defaults: treatment_order %q, blocks %q", s.TreatmentOrder, s.Blocking)
	}
}

// Short names and labels name the treatments; values that are lists or
// mappings are set whole and named from their text.
func TestFactorNamesAndLabels(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`name: t
target: {type: noop}
workload: {ycsb: a}
load: {model: open, rates: [10]}
factors:
  - {path: workload.ycsb, name: mix, values: [a, c]}
  - path: load.rates
    values: [[10, 20], [40]]
  - path: slo
    labels: [tight, loose]
    values: [{percentile: 99, threshold: 5ms}, {percentile: 95, threshold: 50ms}]
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range s.Treatments {
		names = append(names, tr.Name)
	}
	want := []string{
		"mix-a_rates-10-20_slo-tight", "mix-a_rates-10-20_slo-loose", "mix-a_rates-40_slo-tight", "mix-a_rates-40_slo-loose",
		"mix-c_rates-10-20_slo-tight", "mix-c_rates-10-20_slo-loose", "mix-c_rates-40_slo-tight", "mix-c_rates-40_slo-loose",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names\n%v\nwant\n%v", names, want)
	}
	last := s.Treatments[7].Spec
	if last.Workload.YCSB != "c" || !reflect.DeepEqual(last.Levels(), []float64{40}) || last.SLO.Percentile != 95 || last.SLO.Threshold.Milliseconds() != 50 {
		t.Errorf("last treatment: ycsb %s levels %v slo %+v", last.Workload.YCSB, last.Levels(), last.SLO)
	}
	if v := s.Treatments[0].Values; !reflect.DeepEqual(v, []string{"a", "[10, 20]", "{percentile: 99, threshold: 5ms}"}) {
		t.Errorf("values as written: %q", v)
	}
}

// Factors and treatments together: every listed treatment is crossed with
// every combination of the factors, named treatment_factors.
func TestFactorsCrossTreatments(t *testing.T) {
	s, err := Parse("t.yaml", []byte(treatmentBase+`
treatments:
  - name: a
  - name: c
    set: {workload.ycsb: c}
factors:
  - {path: 'lab.hosts[0].volumes[0].iops', values: [300, 600]}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range s.Treatments {
		got = append(got, tr.Name+" "+tr.Spec.Workload.YCSB+" "+strings.Join(tr.Values, ","))
	}
	want := []string{"a_iops-300 a 300", "a_iops-600 a 600", "c_iops-300 c c,300", "c_iops-600 c c,600"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("crossed treatments\n%v\nwant\n%v", got, want)
	}
	if !reflect.DeepEqual(s.Treatments[3].Set, []string{"workload.ycsb", "lab.hosts[0].volumes[0].iops"}) {
		t.Errorf("set paths %v", s.Treatments[3].Set)
	}
}

func TestFactorErrors(t *testing.T) {
	wantParseErrors(t, treatmentBase, []parseErrorCase{
		{"factors: {'lab.hosts[0].type': [small]}", "t.yaml:9: factors: expected a list like"},
		{"factors:\n  - {values: [small]}", "t.yaml:10: factors[0].path: required"},
		{"factors:\n  - {path: 'lab.hosts[0].type'}", "t.yaml:10: factors[0].values: required"},
		{"factors:\n  - {path: 'lab.hosts[0].type', values: []}", "factors[0].values: expected a list of the values"},
		{"factors:\n  - {path: 'lab.hosts[0].type', value: [small]}", "factors[0].value: unknown field; a factor has path, values"},
		{"factors:\n  - {path: 'lab.hosts[0].type', values: [small]}\n  - {path: 'lab.hosts[0].type', values: [large]}", "t.yaml:11: factors[1].path: lab.hosts[0].type is already factors[0]"},
		{"factors:\n  - {path: 'lab.hosts[0].type', values: [small]}\n  - {path: target.type, values: [noop]}", `t.yaml:11: factors[1].name: "type" already names factors[0]; give one of them its own name:`},
		{"factors:\n  - {path: 'lab.hosts[0].type', values: [small, small]}", "factors[0].values[1]: makes the same treatment name (small) as values[0]"},
		{"factors:\n  - {path: 'lab.hosts[0].type', values: [small, large], labels: [s]}", "factors[0].labels: expected a list of 2 short names"},
		{"factors:\n  - {path: 'lab.hosts[0].type', name: 'a b', values: [small]}", `factors[0].name: "a b" is not a short name`},
		{"factors:\n  - {path: name, values: [x]}", "t.yaml:10: factors[0].path: name: name names the whole campaign"},
		{"factors:\n  - {path: 'lab.hosts[2].type', values: [small]}", "t.yaml:10: factors[0].path: lab.hosts[2].type: the list has 1 items, so [2] does not exist"},
		{"factors:\n  - {path: load.rates, values: [[1], ['']]}", "factors[0].values[1]: the value \"['']\" makes no name"},
		// A bad value is reported once, at its line, naming the first
		// treatment that has it.
		{"factors:\n  - path: lab.hosts[0].type\n    values:\n      - small\n      - huge\n  - {path: load.rates, values: [[1], [2]]}",
			`t.yaml:13: lab.hosts[0].type: in treatment type-huge_rates-1: "huge" is not in the catalog`},
		{"factors:\n  - {path: workload.record_count, values: " + numbers(41) + "}\n  - {path: workload.field_count, values: " + numbers(26) + "}",
			"factors: the factors make more than 1000 combinations"},
		{"factors:\n  - {path: load.rates, name: " + strings.Repeat("r", 63) + ", values: [[1]]}", "is longer than 64 characters; give the factors shorter name: or labels:"},
		{"treatments:\n  - {name: a, set: {workload.ycsb: b}}\nfactors:\n  - {path: workload.ycsb, values: [a, c]}", "t.yaml:12: factors[0].path: workload.ycsb is also set by treatment a; set it in one place"},
		{"treatment_order: random\nfactors:\n  - {path: workload.ycsb, values: [a, c]}", `t.yaml:9: treatment_order: unknown value "random"; did you mean "randomized"?`},
		{"blocks: repetitions\nfactors:\n  - {path: workload.ycsb, values: [a, c]}", `t.yaml:9: blocks: unknown value "repetitions"; did you mean "repetition"?`},
		{"blocks: repetition", "t.yaml:9: blocks: orders treatments, and this campaign has none; add factors: or treatments:, or remove it"},
		{"factors:\n  - {path: blocks, values: [treatment]}", "blocks names the whole campaign"},
	})
	// The bad value above is in two treatments but reported once.
	_, err := Parse("t.yaml", []byte(treatmentBase+"factors:\n  - {path: 'lab.hosts[0].type', values: [small, huge]}\n  - {path: load.rates, values: [[1], [2]]}\n"))
	if err == nil || strings.Count(err.Error(), "not in the catalog") != 1 {
		t.Errorf("a bad factor value should be reported once, got:\n%v", err)
	}
}

func TestNameSafe(t *testing.T) {
	for in, want := range map[string]string{
		"small": "small", "256MB": "256MB", "0.5": "0.5", "[10, 20]": "10-20",
		"{type: noop}": "type-noop", "a b  c": "a-b-c", "[]": "", "--x": "--x",
	} {
		if got := nameSafe(in); got != want {
			t.Errorf("nameSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// numbers is the YAML list [1, 2, ..., n].
func numbers(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	return b.String() + "]"
}

// 64 factors of two values make 2^64 combinations, which wrapped the
// count to 0 and let the expansion run out of memory (issue 36): the count
// saturates, and the spec gets one sentence.
func TestFactorCombinationsDoNotOverflow(t *testing.T) {
	for _, n := range []int{63, 64, 65} {
		var b strings.Builder
		b.WriteString(treatmentBase + "factors:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - {path: workload.k%d, values: [1, 2]}\n", i)
		}
		_, err := Parse("t.yaml", []byte(b.String()))
		if err == nil || !strings.Contains(err.Error(), "factors: the factors make more than 1000 combinations; use fewer factors or values") {
			t.Errorf("%d factors of 2 values: %v", n, err)
		}
	}
}

// docs/spec.md allows at most 1,000 treatments; 1,001 listed ones were
// accepted (issue 36).
func TestListedTreatmentsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(treatmentBase + "treatments:\n")
	for i := range 1001 {
		fmt.Fprintf(&b, "  - {name: t%d}\n", i)
	}
	_, err := Parse("t.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "treatments: 1001 treatments is more than the 1000 allowed; split the campaign") {
		t.Errorf("1,001 treatments: %v", err)
	}
}

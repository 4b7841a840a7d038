package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// reuse is the kind of struct another package might decode with DecodeNode.
type reuse struct {
	Small   int8               `yaml:"small"`
	Count   uint               `yaml:"count"`
	Wait    time.Duration      `yaml:"wait"`
	Tags    []string           `yaml:"tags"`
	Limits  map[string]int     `yaml:"limits"`
	Inner   *struct{ On bool } // untagged: key "inner", field key "on"
	Skipped string             `yaml:"-"`
	Ratio   float32            `yaml:"ratio,omitempty"`
}

func decodeString(t *testing.T, src string, dst any) Errors {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return DecodeNode("r.yaml", &n, "target", dst)
}

func TestDecodeNodeReuse(t *testing.T) {
	var got reuse
	errs := decodeString(t, "small: -8\ncount: 3\nwait: 1.5s\ntags: [a, b]\nlimits: {x: 1}\ninner: {on: true}\nratio: 0.5\n", &got)
	if errs != nil {
		t.Fatalf("unexpected errors:\n%v", errs)
	}
	want := reuse{Small: -8, Count: 3, Wait: 1500 * time.Millisecond, Tags: []string{"a", "b"}, Limits: map[string]int{"x": 1}, Inner: &struct{ On bool }{true}, Ratio: 0.5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDecodeNodeErrors(t *testing.T) {
	var got reuse
	errs := decodeString(t, "small: 300\ncount: -1\nwait: 3\ntags: a\nlimits: {x: ~, y: two}\ninner: {of: true}\nskipped: x\nratio: 1e300\n", &got)
	want := []string{
		`r.yaml:1: target.small: 300 is out of range for this field; use a smaller number`,
		`r.yaml:2: target.count: -1 is out of range for this field; use a number from 0 up`,
		`r.yaml:3: target.wait: 3 has no unit; write it with one, e.g. "3s" or "3ms"`,
		`r.yaml:4: target.tags: expected a list, got "a"`,
		`r.yaml:5: target.limits.x: has no value; give it one or remove the key`,
		`r.yaml:5: target.limits.y: expected a whole number, got "two"`,
		`r.yaml:6: target.inner.of: unknown field; did you mean "on"?`,
		`r.yaml:7: target.skipped: unknown field; remove it or use one of: small, count, wait, tags, limits, inner, ratio`,
		`r.yaml:8: target.ratio: 1e+300 is out of range for this field; use a smaller number`,
	}
	if got := strings.Split(errs.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDecodeNodeBadDestination(t *testing.T) {
	var n yaml.Node
	yaml.Unmarshal([]byte("a: 1"), &n)
	if errs := DecodeNode("f", &n, "", reuse{}); len(errs) != 1 || !strings.Contains(errs[0].Msg, "bug in Headroom") {
		t.Errorf("non-pointer destination: %v", errs)
	}
	var m map[int]int
	if errs := DecodeNode("f", &n, "", &m); len(errs) != 1 {
		t.Errorf("map with int keys: %v", errs)
	}
	if errs := DecodeNode("f", nil, "", &reuse{}); errs != nil {
		t.Errorf("nil node: %v", errs)
	}
}

func TestSelfReferentialAlias(t *testing.T) {
	// &a [*a] is a list that contains itself; it is refused before
	// anything expands it.
	lines := parseErrors(t, "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: &a [*a]}\n")
	if len(lines) != 1 || lines[0] != "t.yaml:4: load: the alias *a is inside the value it names, so the value would never end; write the value out" {
		t.Errorf("got %q", lines)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"record_count", "field_count", "request_distribution", "model", "journal_mode"}
	for got, want := range map[string]string{
		"recordcount":         "record_count",
		"RecordCount":         "record_count",
		"requestdistribution": "request_distribution",
		"modle":               "model",
		"journal":             "journal_mode",
		"fieldcont":           "field_count",
		"colour":              "",
		"x":                   "",
	} {
		if s := closest(got, known); s != want {
			t.Errorf("closest(%q) = %q, want %q", got, s, want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

package esl

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func load(t *testing.T, name string) Model {
	t.Helper()
	m, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadExampleFiles(t *testing.T) {
	s := load(t, "single.yaml")
	e, err := s.ESL(OpsPerS, 0)
	if err != nil || !e.IsSingle() || e.Mean() != 300 {
		t.Fatalf("single ops ESL = %+v, %v", e, err)
	}
	if e, _ := s.ESL(BytesPerS, 0); e.Mean() != 75<<20 {
		t.Fatalf("single bytes ESL = %v", e.Mean())
	}
	if _, err := s.ESL("net_bytes_per_s", 0); err == nil || !strings.Contains(err.Error(), "bytes_per_s, ops_per_s") {
		t.Fatalf("unknown quality: %v", err)
	}

	d := load(t, "distribution.yaml")
	e, _ = d.ESL(OpsPerS, 0)
	if len(e.Levels) != 3 || e.Levels[1] != (Level{300, 0.5}) {
		t.Fatalf("distribution = %+v", e.Levels)
	}

	a := load(t, "analytical.yaml")
	e, err = a.ESL(OpsPerS, 1024)
	if err != nil || e.Mean() != 62.5 || !strings.Contains(e.Source, "instance_bandwidth") {
		t.Fatalf("analytical at 1 MiB = %+v, %v", e, err)
	}

	m := load(t, "empirical.yaml").(*Empirical)
	if got := m.OpSizes(); len(got) != 2 || got[0] != 4 || got[1] != 1024 {
		t.Fatalf("sizes = %v", got)
	}
	// Pooled at 4 KiB: two entries of 120 samples each, weights 1/2.
	e, _ = m.ESL(OpsPerS, 4)
	if !near(e.Mean(), 0.5*(0.25*298.5+0.5*300.2+0.25*301.9)+0.5*300, 1e-9) {
		t.Fatalf("pooled mean = %v", e.Mean())
	}
	// 8 KiB is nearest to 4 on a log scale; 100 KiB is nearer 1024 than 4.
	if e, _ := m.ESL(OpsPerS, 8); !strings.Contains(e.Source, "at 4 KiB (nearest benchmarked size to 8 KiB)") {
		t.Fatalf("source = %q", e.Source)
	}
	if m.Nearest(100) != 1024 || m.Nearest(64) != 4 {
		t.Fatalf("nearest(100) = %v, nearest(64) = %v", m.Nearest(100), m.Nearest(64))
	}
	if _, err := m.ESL(BytesPerS, 4); err == nil {
		t.Fatal("the file has no bytes_per_s entries")
	}
	if e, err := m.ESLMix(OpsPerS, 4, 0); err != nil || e.Mean() != 300 {
		t.Fatalf("ESLMix = %+v, %v", e, err)
	}
}

// Every kind marshals to JSON (for the results store) and YAML, and Parse
// reads both back to the same ESLs.
func TestRoundTrip(t *testing.T) {
	for _, name := range []string{"single.yaml", "distribution.yaml", "analytical.yaml", "empirical.yaml"} {
		m := load(t, name)
		js, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		ys, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, data := range [][]byte{js, ys} {
			back, err := Parse(data)
			if err != nil {
				t.Fatalf("%s: %v in\n%s", name, err, data)
			}
			if back.Kind() != m.Kind() {
				t.Fatalf("%s: kind %s != %s", name, back.Kind(), m.Kind())
			}
			for _, q := range m.Qualities() {
				for _, d := range []float64{4, 1024} {
					a, _ := m.ESL(q, d)
					b, _ := back.ESL(q, d)
					if a.Mean() != b.Mean() || len(a.Levels) != len(b.Levels) {
						t.Fatalf("%s %s at %v: %v != %v", name, q, d, a, b)
					}
				}
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"", "has no kind"},
		{"kind: magic", `kind "magic" is not an ESL model kind`},
		{"kind: single\nqualities: {}", "qualities is empty"},
		{"kind: single\nqualities: {ops_per_s: -1}", "qualities.ops_per_s"},
		{"kind: single\nqualitis: {ops_per_s: 1}", "line 2: unknown field qualitis"},
		{"kind: distribution\nqualities: {ops_per_s: [{level: 1, freq: -1}]}", "non-negative"},
		{"kind: analytical\nmodel: gp2\nparams: {size_gib: 1}", `model "gp2"`},
		{"kind: analytical\nmodel: provisioned_iops_volume\nparams: {size_gib: 10, provisioned_iops: 301}", "exceeds 30 x size_gib = 300"},
		{"kind: analytical\nmodel: provisioned_iops_volume\nparams: {size_gb: 10, provisioned_iops: 30}", "unknown field size_gb"},
		{"kind: empirical\nentries: []", "entries is empty"},
		{"kind: empirical\nentries: [{op_size_kib: 4, read_pct: 100, quality: ops_per_s, samples: 0, levels: [{level: 1, freq: 1}]}]", "entries[0].samples is 0"},
		{"kind: empirical\nentries: [{op_size_kib: 4, read_pct: 100, quality: ops_per_s, samples: 1, levels: [{level: 1, freq: 1}]}, {op_size_kib: 4, read_pct: 100, quality: ops_per_s, samples: 1, levels: [{level: 1, freq: 1}]}]", "entries[1] repeats"},
		{"kind: [", "not valid YAML"},
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%q: err = %v, want %q", c.doc, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("%q: error is not one line: %q", c.doc, err)
		}
	}
	if _, err := Load("testdata/missing.yaml"); err == nil || !strings.Contains(err.Error(), "cannot read the ESL model file") {
		t.Fatalf("missing file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"kind: single\nqualities: {ops_per_s: 3}", "kind: empirical\nentries: [{op_size_kib: 4, read_pct: 100, quality: ops_per_s, samples: 1, levels: [{level: 1, freq: 1}]}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		for _, q := range m.Qualities() {
			if e, err := m.ESL(q, 4); err == nil && !(e.Mean() > 0) {
				t.Fatalf("a parsed model gave a non-positive ESL %v", e)
			}
		}
	})
}

package spec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

const fullSpec = `name: quick-start.v1
description: SQLite under YCSB A
seed: 42
target:
  type: fake
  path: db.sqlite
  journal_mode: delete
  cache_mb: 16
  busy_timeout: 250ms
workload:
  ycsb: A
  record_count: 5000
  field_count: 5
  field_length: 50
  operations: {read: 0.9, update: 0.1}
  request_distribution: hotspot
  zipfian_constant: 0.5
  hotspot_data_fraction: 0.1
  hotspot_opn_fraction: 0.9
  max_scan_length: 20
  scan_length_distribution: zipfian
  read_all_fields: false
  write_all_fields: true
  insert_order: ordered
load:
  model: open
  arrival: constant
  rates: [100, 200.5, 4e2]
  max_in_flight: 64
  late_after: 2ms
  drop_after: 50ms
  timeout: 1s
phases:
  populate: false
  warmup: 0
  measure: 30s
  cooldown: 500ms
repetitions: 3
order: randomized
order_seed: 7
slo:
  percentile: 99.9
  threshold: 25ms
  operation: read
interval: 500ms
output: out/dir
`

// smallSpec is a spec with only the sections every spec needs; tests
// add the sections they are about.
const smallSpec = "name: t\ntarget: {type: noop}\nworkload: {ycsb: a}\nload: {model: open, rates: [10]}\n"

func mustParse(t *testing.T, src string) *Spec {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func TestParseFullSpec(t *testing.T) {
	s := mustParse(t, fullSpec)
	want := &Spec{
		Name:        "quick-start.v1",
		Description: "SQLite under YCSB A",
		Seed:        42,
		Target: Target{
			Type:    "fake",
			Options: &fakeOptions{Path: "db.sqlite", JournalMode: "delete", CacheMB: 16, Busy: Duration{250 * time.Millisecond}},
			Line:    4,
		},
		Workload: Workload{
			YCSB:                   "a",
			RecordCount:            5000,
			FieldCount:             5,
			FieldLength:            50,
			Operations:             map[string]float64{"read": 0.9, "update": 0.1},
			RequestDistribution:    "hotspot",
			ZipfianConstant:        0.5,
			HotspotDataFraction:    0.1,
			HotspotOpnFraction:     0.9,
			MaxScanLength:          20,
			ScanLengthDistribution: "zipfian",
			ReadAllFields:          ptr(false),
			WriteAllFields:         ptr(true),
			InsertOrder:            "ordered",
		},
		Load: Load{
			Model:       "open",
			Arrival:     "constant",
			Rates:       &Levels{Values: []float64{100, 200.5, 400}, Line: 28},
			MaxInFlight: 64,
			LateAfter:   Duration{2 * time.Millisecond},
			DropAfter:   Duration{50 * time.Millisecond},
			Timeout:     Duration{time.Second},
			DeadAfter:   Duration{5 * time.Second},
		},
		Phases: Phases{
			Populate: ptr(false),
			Warmup:   Duration{0},
			Measure:  Duration{30 * time.Second},
			Cooldown: Duration{500 * time.Millisecond},
		},
		Repetitions: 3,
		Order:       "randomized",
		OrderSeed:   ptr(int64(7)),
		SLO:         &SLO{Percentile: 99.9, Threshold: Duration{25 * time.Millisecond}, Operation: "read"},
		Interval:    Duration{500 * time.Millisecond},
		Output:      "out/dir",
		Reset:       "none",
		OnFailure:   "continue",
		Monitor:     defaultMonitor(500 * time.Millisecond),
		File:        "t.yaml",
		Source:      []byte(fullSpec),
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse(fullSpec) =\n%+v\nwant\n%+v", s, want)
	}
}

func TestParseDefaults(t *testing.T) {
	s := mustParse(t, "name: min\ntarget: {type: fake}\nworkload: {ycsb: b}\nload: {model: open, rates: [10]}\n")
	want := &Spec{
		Name:   "min",
		Seed:   1,
		Target: Target{Type: "fake", Options: &fakeOptions{JournalMode: "wal", CacheMB: 64}, Line: 2},
		Workload: Workload{
			YCSB:                   "b",
			RecordCount:            1000,
			FieldCount:             10,
			FieldLength:            100,
			ZipfianConstant:        0.99,
			HotspotDataFraction:    0.2,
			HotspotOpnFraction:     0.8,
			MaxScanLength:          100,
			ScanLengthDistribution: "uniform",
			ReadAllFields:          ptr(true),
			WriteAllFields:         ptr(false),
			InsertOrder:            "hashed",
		},
		Load: Load{
			Model:       "open",
			Arrival:     "poisson",
			Rates:       &Levels{Values: []float64{10}, Line: 4},
			MaxInFlight: 256,
			LateAfter:   Duration{time.Millisecond},
			DropAfter:   Duration{100 * time.Millisecond},
			Timeout:     Duration{10 * time.Second},
			DeadAfter:   Duration{5 * time.Second},
		},
		Phases:      Phases{Populate: ptr(true), Warmup: Duration{10 * time.Second}, Measure: Duration{time.Minute}},
		Repetitions: 1,
		Order:       "sequential",
		OrderSeed:   ptr(int64(1)),
		Interval:    Duration{time.Second},
		Output:      "results",
		Reset:       "none",
		OnFailure:   "continue",
		Monitor:     defaultMonitor(time.Second),
		File:        "t.yaml",
		Source:      s.Source,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults =\n%+v\nwant\n%+v", s, want)
	}
	if s.Workload.RequestDistribution != "" {
		t.Errorf("request_distribution should stay empty for the workload package to choose, got %q", s.Workload.RequestDistribution)
	}
}

func TestParseClosedModelClearsOpenSettings(t *testing.T) {
	s := mustParse(t, `name: closed
seed: 9
target: {type: noop}
workload:
  operations: {read: 3, insert: 1}
load:
  model: closed
  clients: {from: 1, to: 4, step: 1}
  think_time: 7s
`)
	l := s.Load
	if l.Arrival != "" || l.MaxInFlight != 0 || l.LateAfter.Duration != 0 || l.DropAfter.Duration != 0 {
		t.Errorf("closed model kept open-model settings: %+v", l)
	}
	if l.ThinkTime.Duration != 7*time.Second || l.Timeout.Duration != 10*time.Second {
		t.Errorf("think_time/timeout = %v/%v, want 7s/10s", l.ThinkTime, l.Timeout)
	}
	if got := s.Levels(); !reflect.DeepEqual(got, []float64{1, 2, 3, 4}) {
		t.Errorf("Levels() = %v, want [1 2 3 4]", got)
	}
	if s.Target.Options == nil {
		t.Errorf("a target type without options still gets an (empty) options value")
	}
	if s.Workload.YCSB != "" || s.Workload.Operations["read"] != 3 {
		t.Errorf("workload = %+v", s.Workload)
	}
	if *s.OrderSeed != 9 {
		t.Errorf("order_seed default = %d, want seed 9", *s.OrderSeed)
	}
}

func TestParseWrittenZeroReplacesDefault(t *testing.T) {
	s := mustParse(t, `name: z
seed: 0
target: {type: fake}
workload: {ycsb: c, hotspot_data_fraction: 0, read_all_fields: false}
load: {model: open, rates: [1], late_after: 0s}
phases: {warmup: 0, populate: false}
`)
	if s.Seed != 0 || s.Workload.HotspotDataFraction != 0 || *s.Workload.ReadAllFields || s.Load.LateAfter.Duration != 0 || s.Phases.Warmup.Duration != 0 || *s.Phases.Populate {
		t.Errorf("written zero values did not replace defaults: %+v", s)
	}
}

func TestParseEmptyValueKeepsDefault(t *testing.T) {
	s := mustParse(t, "name: e\ntarget: {type: fake}\nworkload: {ycsb: a, record_count: ~}\nload: {model: open, rates: [1]}\nslo:\nphases:\n  warmup:\n")
	if s.Workload.RecordCount != 1000 || s.SLO != nil || s.Phases.Warmup.Duration != 10*time.Second {
		t.Errorf("empty values should leave defaults: record_count=%d slo=%v warmup=%v", s.Workload.RecordCount, s.SLO, s.Phases.Warmup)
	}
}

func TestParseAnchorsAndAliases(t *testing.T) {
	s := mustParse(t, `name: alias
target: {type: fake}
workload: {ycsb: a}
load:
  model: open
  rates: &r [5, 10]
  timeout: &t 2s
slo: {percentile: 99, threshold: *t}
`)
	if s.SLO.Threshold.Duration != 2*time.Second || len(s.Levels()) != 2 {
		t.Errorf("aliases not followed: slo=%+v levels=%v", s.SLO, s.Levels())
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(path, []byte(fullSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.File != path || string(s.Source) != fullSpec {
		t.Errorf("File = %q, Source %d bytes; want %q and the file's text", s.File, len(s.Source), path)
	}

	missing := filepath.Join(dir, "nope.yaml")
	_, err = LoadFile(missing)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadFile(missing) = %v, want an error wrapping fs.ErrNotExist", err)
	}
	if msg := err.Error(); msg != missing+": spec file not found; check the path" {
		t.Errorf("missing-file message = %q", msg)
	}

	_, err = LoadFile(dir)
	if err == nil || err.Error() != dir+": cannot read the spec file (is a directory); give the path of a YAML file" {
		t.Errorf("LoadFile(directory) = %v", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: [\n"), 0o644)
	_, err = LoadFile(bad)
	var es Errors
	if !errors.As(err, &es) || es[0].File != bad {
		t.Errorf("LoadFile(bad) = %v, want Errors naming %s", err, bad)
	}
}

// defaultMonitor is the monitor section a spec gets when it has none.
func defaultMonitor(interval time.Duration) Monitor {
	on := true
	return Monitor{Enabled: &on, Interval: Duration{interval}, CPU: &on, Memory: &on,
		Disks: []string{"all"}, Interfaces: []string{"all"}, Processes: []string{"self"}}
}

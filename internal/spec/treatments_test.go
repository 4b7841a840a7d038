package spec

import (
	"strings"
	"testing"
)

const treatmentBase = `name: t
target: {type: noop}
workload: {ycsb: a}
load: {model: open, rates: [10, 20]}
repetitions: 2
lab:
  hosts:
    - {name: db1, type: small, volumes: [{name: data, type: piops, size_gib: 100, iops: 300}]}
`

func TestTreatmentsChangeCopiesOfTheBase(t *testing.T) {
	s, err := Parse("t.yaml", []byte(treatmentBase+`
treatments:
  - name: piops-300
  - name: piops-1800
    set:
      lab.hosts[0].volumes[0].iops: 1800
      load.rates: [30]
      target: {type: noop}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Treatments) != 2 {
		t.Fatalf("treatments: %+v", s.Treatments)
	}
	a, b := s.Treatments[0], s.Treatments[1]
	if a.Name != "piops-300" || a.Spec.Lab.Hosts[0].Volumes[0].IOPS != 300 || len(a.Spec.Levels()) != 2 {
		t.Errorf("first treatment changed: %+v", a.Spec.Lab.Hosts[0])
	}
	if b.Spec.Lab.Hosts[0].Volumes[0].IOPS != 1800 || len(b.Spec.Levels()) != 1 || b.Spec.Levels()[0] != 30 || b.Spec.Target.Type != "noop" {
		t.Errorf("second treatment: iops %v levels %v target %s", b.Spec.Lab.Hosts[0].Volumes[0].IOPS, b.Spec.Levels(), b.Spec.Target.Type)
	}
	if s.Lab.Hosts[0].Volumes[0].IOPS != 300 {
		t.Error("a treatment changed the base spec")
	}
	if strings.Join(b.Set, ",") != "lab.hosts[0].volumes[0].iops,load.rates,target" {
		t.Errorf("set paths %v", b.Set)
	}
	if b.Spec.Repetitions != 2 || b.Spec.Name != "t" {
		t.Errorf("unchanged fields differ: %+v", b.Spec)
	}
}

func TestTreatmentPathsAddFieldsAndQuoteKeys(t *testing.T) {
	s := mustParse(t, smallSpec+`treatments:
  - name: a
    set:
      slo.percentile: 99
      slo.threshold: 20ms
      monitor.disks: []
`)
	sp := s.Treatments[0].Spec
	if sp.SLO == nil || sp.SLO.Percentile != 99 || sp.SLO.Threshold.Milliseconds() != 20 || len(sp.Monitor.Disks) != 0 {
		t.Errorf("added fields: %+v %+v", sp.SLO, sp.Monitor)
	}
	segs, err := splitPath(`target.managed.settings["pg_stat_statements.max"]`)
	if err != nil || len(segs) != 4 || segs[3].key != "pg_stat_statements.max" {
		t.Errorf("quoted key: %+v %v", segs, err)
	}
}

func TestTreatmentErrors(t *testing.T) {
	wantParseErrors(t, treatmentBase+"treatments:\n", []parseErrorCase{
		{"  - name: a\n    set:\n      lab.hosts[3].type: large", "t.yaml:12: treatments[0].set: lab.hosts[3].type: the list has 1 items, so [3] does not exist"},
		{"  - {name: a, set: {name: other}}", "name names the whole campaign"},
		{"  - {name: a}\n  - {name: a}", `treatments[1].name: "a" is used by an earlier treatment`},
		{"  - {set: {load.rates: [1]}}", "treatments[0].name: required"},
		{"  - {name: a, sett: {}}", "treatments[0].sett: unknown field"},
		{"  - name: big\n    set:\n      lab.hosts[0].type: huge", `t.yaml:12: lab.hosts[0].type: in treatment big: "huge" is not in the catalog`},
		{"  - name: a\n    set:\n      \"load.rates[0]\": -5", "in treatment a:"},
		{"  - {name: a, set: {workload.ycsb.x: 1}}", "ycsb is not a mapping"},
		{"  - {name: a, set: {workload.ycsb: b}}\n  - name: b\n    set:\n      lab.hosts[0].volumes[0].iops: 9000", "t.yaml:13: lab.hosts[0].volumes[0].iops: in treatment b: 9000 IOPS is more than 30 per GiB"},
	})
}

// parseErrorCase is a spec's end and a part of the error it must make.
type parseErrorCase struct{ more, want string }

// wantParseErrors parses base followed by each case's more (and a
// newline) as the file t.yaml and wants an error containing the case's want.
func wantParseErrors(t *testing.T, base string, cases []parseErrorCase) {
	t.Helper()
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(base+c.more+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", c.more, err, c.want)
		}
	}
}

// Turning one monitor default off leaves the others on.
func TestMonitorDefaultsAreIndependent(t *testing.T) {
	s := mustParse(t, smallSpec+"monitor: {cpu: false}\n")
	if *s.Monitor.CPU || !*s.Monitor.Memory || !*s.Monitor.Enabled {
		t.Errorf("monitor: {cpu: false} gave cpu %v, memory %v, enabled %v", *s.Monitor.CPU, *s.Monitor.Memory, *s.Monitor.Enabled)
	}
}

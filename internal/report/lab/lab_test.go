package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
)

func TestSectionStatesTheUnitAndEachHostsQuota(t *testing.T) {
	cu := &results.ComputeUnit{Mode: "reference", Score: 0.8, Reference: "the reference core", Cores: 2,
		Measurement: &results.CPUMeasurement{Tries: 5, Spread: 0.04, OthersCores: 0.5, StealPct: 1},
		Notes:       []string{"host db1 cannot get its share"}}
	l := results.Lab{Name: "aisle", Up: time.Unix(0, 0), ComputeUnit: cu, Hosts: []results.HostLimits{
		{Host: "db1", Type: "xlarge", VCPUs: 4, PricePerHour: 0.4},
		{Host: "app1", Type: "small", VCPUs: 0.5, PricePerHour: 0.05},
	}}
	s := Section([]results.Lab{l})
	for _, want := range []string{"the reference core", "0.80 units per core", "each vCPU got 1.25 of its cores", "5 tries (spread 4%)", "0.50 of 2 cores"} {
		if !strings.Contains(s.Summary, want) {
			t.Errorf("summary lacks %q: %s", want, s.Summary)
		}
	}
	if len(s.Blocks) != 2 || s.Blocks[0].Note == nil || !strings.Contains(s.Blocks[0].Note.Text, "db1 cannot get its share") {
		t.Fatalf("blocks: %+v", s.Blocks)
	}
	tab := s.Blocks[1].Table
	// app1: 0.5 / 0.8 = 0.625 cores; db1: 4 / 0.8 = 5, capped at the 2 cores.
	if tab == nil || len(tab.Rows) != 2 || tab.Rows[0][0].Text != "app1" || tab.Rows[0][3].Text != "0.625" || tab.Rows[1][3].Text != "2" {
		t.Errorf("host table: %+v", tab)
	}
	machine := &results.ComputeUnit{Mode: "machine", Score: 1.3, Cores: 2}
	if q := Quota(machine, 4); q != 4 {
		t.Errorf("machine mode: %g cores for 4 vCPUs, want 4 (a vCPU is a core, uncapped)", q)
	}
	if !strings.Contains(Summary(machine), "one core of the machine") {
		t.Errorf("machine summary: %s", Summary(machine))
	}
}

package scaling

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// The v1 lab store: postgres managed on lab host db1, a small instance
// ($0.09/h, 0.5 vCPU) with a 100 GiB piops volume at 200 IOPS priced
// 100 × 0.125 + 200 × 0.065 = $25.5 per month.
func TestTreatmentDeploymentV1Lab(t *testing.T) {
	r := resultstest.OpenV1(t, "lab.db")
	tr := r.Treatments()[0]
	d, ok := TreatmentDeployment(r, tr)
	want := Deployment{Lab: "v1-lab", Hosts: []string{"db1"}, Types: "small", Servers: 1, VCPUs: 0.5}
	price := d.PricePerHour
	d.PricePerHour = 0
	if !ok || !reflect.DeepEqual(d, want) || !near(price, 0.09+25.5/730, 1e-12) {
		t.Errorf("deployment %+v at $%v/h, %v; want %+v at $%v/h", d, price, ok, want, 0.09+25.5/730)
	}
	up := r.Labs()[0].Up
	if _, ok := DeploymentAt(r, up.Add(-time.Second), nil); ok {
		t.Error("a deployment before the lab came up")
	}
	if _, ok := DeploymentAt(r, up, []string{"nosuch"}); ok {
		t.Error("a deployment on a host the lab does not have")
	}
}

// A store with the fact tables: a lab of db1 (small) and db2 (medium)
// whose db1 got a second vCPU 10 s after it came up. Every lab host is a
// server unless the target names its hosts, and a limit change before the
// moment asked about counts.
func TestDeploymentAtFollowsLimits(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	st := resultstest.Create(t, "", store.Campaign{Name: "facts", CreatedAt: t0})
	hosts := []map[string]any{
		{"name": "db1", "type": "small", "vcpus": 0.5, "price_per_hour": 0.09},
		{"name": "db2", "type": "medium", "vcpus": 1.0, "price_per_hour": 0.18},
	}
	detail, _ := json.Marshal(map[string]any{"name": "lab", "hosts": hosts})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.AddEvent(store.Event{Time: t0, Kind: "lab", Detail: string(detail)}))
	limits := []results.HostLimits{
		{Host: "db1", From: t0, Lab: "lab", Type: "small", VCPUs: 0.5, PricePerHour: 0.09, Cause: "up"},
		{Host: "db2", From: t0, Lab: "lab", Type: "medium", VCPUs: 1, PricePerHour: 0.18, Cause: "up"},
		{Host: "db1", From: t0.Add(10 * time.Second), Lab: "lab", Type: "small", VCPUs: 1, PricePerHour: 0.09, Cause: "set_cpu"},
	}
	var rows []store.HostLimitRow
	for _, hl := range limits {
		row, err := hl.Row()
		must(err)
		rows = append(rows, row)
	}
	must(st.AddHostLimits(rows))
	row, err := results.Treatment{Name: "", Load: results.Load{Model: "open"}}.Row()
	must(err)
	must(st.PutTreatment(row))
	r, err := results.New(st)
	must(err)

	d, ok := DeploymentAt(r, t0.Add(5*time.Second), nil)
	if !ok || d.Servers != 2 || d.Types != "medium+small" || d.VCPUs != 0.75 || !near(d.PricePerHour, 0.135, 1e-12) {
		t.Errorf("both hosts at 5 s: %+v %v", d, ok)
	}
	d, ok = DeploymentAt(r, t0.Add(15*time.Second), []string{"db1"})
	if !ok || d.Servers != 1 || d.VCPUs != 1 || d.Types != "small" {
		t.Errorf("db1 after its set_cpu: %+v %v; want 1 vCPU", d, ok)
	}
	if _, ok := TreatmentDeployment(r, r.Treatments()[0]); ok {
		t.Error("a treatment without runs has no deployment")
	}
}

func TestShapesAndCost(t *testing.T) {
	ds := []Deployment{{Servers: 1, VCPUs: 0.5, PricePerHour: 0.09}, {Servers: 1, VCPUs: 1, PricePerHour: 0.18}}
	if !Differ(ds) || Differ([]Deployment{ds[0], ds[0]}) {
		t.Error("Differ")
	}
	s := Shapes([]string{"small", "medium"}, ds)
	if s["small"].Size != 1 || s["medium"].Size != 2 || s["medium"].Servers != 1 || s["medium"].PricePerHour != 0.18 {
		t.Errorf("shapes %+v", s)
	}
	// 2 servers × $0.09/h × 730 h / 100 req/s.
	if got := CostPerReqPerSec(2, 0.09, 100); !near(got, 1.314, 1e-12) {
		t.Errorf("cost %v, want 1.314", got)
	}
	for _, c := range []struct{ price, tput float64 }{{0, 100}, {0.09, math.NaN()}, {0.09, 0}, {0.09, math.Inf(1)}} {
		if got := CostPerReqPerSec(1, c.price, c.tput); !math.IsNaN(got) {
			t.Errorf("cost at $%v/h and %v req/s = %v, want NaN", c.price, c.tput, got)
		}
	}
}

// Eight hosts of 0.1 vCPU have the size of four: the float sum of eight
// tenths (0.7999999999999999) over 8 rounds to 0.1, so the 8-node cluster
// of examples/cassandra-scaling.yaml is the horizontal step of the 4-node
// one, not a "vertical" one of size 0.9999999999999999.
func TestPerServerVCPUsOfATenth(t *testing.T) {
	sum := func(n int) float64 {
		var s float64
		for range n {
			s += 0.1
		}
		return s
	}
	if sum(8)/8 == 0.1 {
		t.Fatal("the float sum no longer shows the problem; pick another count")
	}
	four, eight := perServer(sum(4), 4), perServer(sum(8), 8)
	if four != 0.1 || eight != 0.1 {
		t.Fatalf("per server %v and %v, want 0.1 each", four, eight)
	}
	sh := Shapes([]string{"4-small", "8-small"}, []Deployment{{Servers: 4, VCPUs: four}, {Servers: 8, VCPUs: eight}})
	base := Treatment{Name: "4-small", Servers: sh["4-small"].Servers, Size: sh["4-small"].Size}
	out := Treatment{Name: "8-small", Servers: sh["8-small"].Servers, Size: sh["8-small"].Size}
	if k := kind(base, out, false); k != "horizontal" {
		t.Errorf("8 nodes of the 4-node cluster's size: %s, want horizontal", k)
	}
}

package results

import (
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// A lab event's compute unit reaches the lab and every host limit of that
// lab from its start on; hosts outside it, and labs without one, have none.
func TestComputeUnitsReachTheHostsOfTheirLab(t *testing.T) {
	t0 := time.Unix(1000, 0)
	evs := []store.Event{{Time: t0, Kind: EventLab, Detail: `{"name":"aisle","hosts":[{"name":"db1","vcpus":0.5}],
		"compute_unit":{"mode":"reference","score":0.8,"reference":"ref","cores":2,"measurement":{"tries":5,"spread":0.1,"others_cores":0.3}}}`},
		{Time: t0.Add(time.Hour), Kind: EventLab, Detail: `{"name":"old","hosts":[{"name":"x1","vcpus":1}]}`}}
	r := &Results{labs: labsOf(evs), hosts: map[string]hostSeries{
		"db1": {{Host: "db1", Lab: "aisle", From: t0, VCPUs: 0.5}, {Host: "db1", Lab: "aisle", From: t0.Add(time.Minute), VCPUs: 1}},
		"x1":  {{Host: "x1", Lab: "old", From: t0.Add(time.Hour), VCPUs: 1}},
		"pc":  {{Host: "pc", From: t0}},
	}}
	r.attachComputeUnits()
	if cu := r.labs[0].ComputeUnit; cu == nil || cu.Score != 0.8 || cu.Measurement.Tries != 5 || cu.CoresPerVCPU() != 1.25 {
		t.Fatalf("lab aisle's unit: %+v", cu)
	}
	for _, h := range r.hosts["db1"] {
		if h.Compute == nil || h.Compute.Score != 0.8 {
			t.Errorf("db1 from %v: %+v", h.From, h.Compute)
		}
	}
	if r.hosts["x1"][0].Compute != nil || r.hosts["pc"][0].Compute != nil || r.labs[1].ComputeUnit.CoresPerVCPU() != 1 {
		t.Errorf("a lab without a unit, or a host outside a lab, got one")
	}
}

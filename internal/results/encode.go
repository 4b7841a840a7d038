package results

import (
	"encoding/json"

	"github.com/headroom-dev/headroom/internal/store"
)

// Row turns a treatment's facts into the row the store keeps (the writer
// side of the model: the campaign runner calls it).
func (t Treatment) Row() (store.TreatmentRow, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return store.TreatmentRow{}, err
	}
	r := store.TreatmentRow{Name: t.Name, Ord: t.Index, Model: t.Load.Model, TargetType: t.Target.Type,
		InProcess: t.Target.InProcess, Address: t.Target.Address, Facts: string(b)}
	if t.SLO != nil {
		r.SLOPercentile, r.SLOThreshold, r.SLOOp = t.SLO.Percentile, t.SLO.Threshold, t.SLO.Op
	}
	return r, nil
}

// Row turns host limits into the row the store keeps.
func (h HostLimits) Row() (store.HostLimitRow, error) {
	vols := "[]"
	if len(h.Volumes) > 0 {
		b, err := json.Marshal(h.Volumes)
		if err != nil {
			return store.HostLimitRow{}, err
		}
		vols = string(b)
	}
	return store.HostLimitRow{Host: h.Host, From: h.From, Lab: h.Lab, Type: h.Type, Address: h.Address,
		VCPUs: h.VCPUs, MemoryBytes: h.MemoryBytes, NetworkMbit: h.NetworkMbit, PricePerHour: h.PricePerHour,
		Stopped: h.Stopped, LinkDown: h.LinkDown, Cause: h.Cause, Volumes: vols}, nil
}

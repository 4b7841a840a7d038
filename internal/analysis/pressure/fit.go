package pressure

import (
	"github.com/headroom-dev/headroom/internal/analysis/slp"
)

// fitPair aligns the two series (slp.FitFactor, slp.BestUnit). A fit that
// cannot be made (no overlap in time) is reported in the Fit, not as an
// error.
func fitPair(p PairInput) Fit {
	f := Fit{Provider: p.Provider.String(), Client: p.Client.String(), Auto: p.Auto}
	po, err := slp.VolumeObservations(p.ProviderSamples)
	if err != nil {
		f.OpsErr = err.Error()
		return f
	}
	co, err := slp.VolumeObservations(p.ClientSamples)
	if err != nil {
		f.OpsErr = err.Error()
		return f
	}
	pOps, pBytes := split(po)
	cOps, cBytes := split(co)
	if k, err := slp.FitFactor(pOps, cOps); err == nil {
		f.Ops = &k
	} else {
		f.OpsErr = err.Error()
	}
	if k, err := slp.FitFactor(pBytes, cBytes); err == nil {
		f.Bytes = &k
	} else {
		f.BytesErr = err.Error()
	}
	if best, all, err := slp.BestUnit(pOps, co, nil); err == nil {
		f.Unit, f.Units = &best, all
	} else {
		f.UnitErr = err.Error()
	}
	return f
}

func split(obs []slp.VolumeSecond) (ops, bytes slp.Series) {
	for _, o := range obs {
		ops = append(ops, slp.Point{Start: o.Start, Period: o.Period, Value: o.Ops})
		bytes = append(bytes, slp.Point{Start: o.Start, Period: o.Period, Value: o.Bytes})
	}
	return ops, bytes
}

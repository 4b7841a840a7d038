package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// ProbeOptions are a probe's settings beside probe.Config.
type ProbeOptions struct {
	// Treatment is recorded with the probe ("" without treatments).
	Treatment string
	// RTTAddr is the host:port Meter times connects to, for the record
	// ("" with the RTT guard off).
	RTTAddr string
	// Meter is the RTT guard's meter; nil runs without the guard.
	Meter probe.RTTMeter
	// Window hears every window once it is judged and stored; nil = quiet.
	Window func(probe.Window)
	// Baseline hears the unloaded latency once it is measured; nil = quiet.
	Baseline func(probe.Baseline)
	// Note hears one line of news (load agents connecting); nil = quiet.
	Note func(string)
	// Kubernetes, when set, sends the windows' requests from the pods of
	// a Kubernetes Job (headroom probe --agents k8s:N) in place of
	// load.agents.
	Kubernetes *KubernetesAgents
	// keys, when set, is where the probe's inserts start (a campaign's
	// key space), and is moved to where they ended, so that the runs
	// after it never reuse a key the probe inserted (relative.go).
	keys *keySpace
}

// Probe runs the black-box capacity probe (seed 004, internal/probe)
// against the treatment's filled target with its workload, storing the
// probe and every window as it completes. The result is nil when the probe
// could not start. An interruption returns the partial result with ctx's
// error; a failure returns it with an error that says where the windows so
// far are.
func (su *Setup) Probe(ctx context.Context, cfg probe.Config, o ProbeOptions) (*probe.Result, error) {
	s, st := su.spec, su.st
	gen, err := workload.New(su.Workload, RunSeed(s.Seed, 0))
	if err != nil {
		return nil, err
	}
	if o.keys != nil {
		gen.ContinueInserts(o.keys.NextInsert)
		gen.ContinueSequences(o.keys.Sequences)
	}
	var fw *fleetWindows
	var runner probe.WindowRunner = &probe.EngineRunner{
		Target: su.Target, Generator: gen, Arrival: s.Load.Arrival, MaxInFlight: s.Load.MaxInFlight,
		LateAfter: s.Load.LateAfter.Duration, DropAfter: s.Load.DropAfter.Duration, Timeout: s.Load.Timeout.Duration,
		Seed: RunSeed(s.Seed, 1),
	}
	if o.Kubernetes != nil || s.Load.Agents != nil { // load agents send the windows' requests (agents_probe.go)
		var f *fleet
		if o.Kubernetes != nil {
			f, err = startKubernetesFleet(ctx, s, o.Kubernetes, o.Note) // agents_k8s.go
		} else {
			f, err = startFleet(ctx, s, su.Hosts, o.Note, filepath.Dir(st.Path()))
		}
		if err != nil {
			return nil, err
		}
		defer f.close()
		fw = newFleetWindows(f, s, o.Treatment, su.Target, RunSeed(s.Seed, 1), gen.NextInsert())
		runner = fw
	}
	id, err := st.StartProbe(store.Probe{
		Target: s.Target.Type, RTTAddr: o.RTTAddr, ConfigJSON: probeConfigJSON(cfg, s.Load, o.Treatment),
		SLAPercentile: cfg.Percentile, SLAThreshold: cfg.Threshold,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var storeErr error
	progress := func(w probe.Window) {
		if o.Window != nil {
			o.Window(w)
		}
		if storeErr == nil {
			if storeErr = st.AddProbeWindow(storeWindow(id, w)); storeErr != nil {
				cancel() // the results cannot be kept: stop probing
			}
		}
	}
	baseline := func(b probe.Baseline) {
		if o.Baseline != nil {
			o.Baseline(b)
		}
		if storeErr == nil {
			if storeErr = st.SetProbeBaseline(id, storeBaseline(b)); storeErr != nil {
				cancel()
			}
		}
	}
	res, runErr := probe.Run(runCtx, cfg, runner, o.Meter, probe.Observer{Baseline: baseline, Window: progress})
	if o.keys != nil {
		o.keys.NextInsert, o.keys.Sequences = gen.NextInsert(), gen.Sequences()
		if fw != nil {
			o.keys.NextInsert = fw.nextInsert // the agents' share of the key space ends there
		}
	}
	if storeErr != nil {
		runErr = storeErr
	}
	status := store.StatusCompleted
	switch {
	case runErr != nil:
		status = store.StatusFailed
	case res.Stop == probe.StopInterrupted:
		status = store.StatusInterrupted
	}
	note := res.Note
	if runErr != nil {
		note = joinText(note, runErr.Error())
	}
	if ferr := st.FinishProbe(id, store.Probe{
		Status: status, Stop: res.Stop, Estimate: res.Estimate, LowerBound: res.LowerBound,
		ClientLimited: res.ClientLimited, BaselineRTTUs: res.BaselineRTT * 1000, Note: note,
	}); ferr != nil && runErr == nil {
		runErr = ferr
	}
	if runErr != nil {
		return &res, fmt.Errorf("%v; the windows so far are in %s", runErr, st.Path())
	}
	if status == store.StatusInterrupted {
		return &res, ctx.Err()
	}
	return &res, nil
}

// RTTAddress is the host:port the probe's RTT guard times connects to: the
// address the target's server listens on (target.Addresser; for a server
// on a lab host, the host's address). When there is none it says why.
func RTTAddress(tgt target.Target, typ string) (addr, why string) {
	if a, ok := tgt.(target.Addresser); ok {
		if addr := a.Address(); addr != "" {
			return addr, ""
		}
		return "", fmt.Sprintf("the %s target has no TCP address (it connects through a Unix socket)", typ)
	}
	return "", fmt.Sprintf("the %s target has no network address", typ)
}

// WindowPercentile returns the window's latency at p, one of
// probe.Percentiles (NaN for another p).
func WindowPercentile(w probe.Window, p float64) float64 {
	for i, q := range probe.Percentiles {
		if q == p && i < len(w.Percentiles) {
			return w.Percentiles[i]
		}
	}
	return math.NaN()
}

// storeWindow converts a judged window for the results store (latencies
// from milliseconds to microseconds).
func storeWindow(id int64, w probe.Window) store.ProbeWindow {
	us := func(v float64) float64 { return v * 1000 }
	sw := store.ProbeWindow{
		ProbeID: id, Seq: w.Seq, Phase: w.Phase, Rate: w.Rate, Offered: w.Offered, Achieved: w.Achieved,
		Start: w.Start, Duration: w.Duration, RTTBeforeUs: us(w.RTTBefore), RTTAfterUs: us(w.RTTAfter),
		PassedSeconds: w.PassedSeconds, Accepted: w.Accepted, MetSLA: w.MetSLA, Discarded: w.Discarded, Verdict: w.Verdict,
		Sent: w.Sent, Completed: w.Completed, Errors: w.Errors, Late: w.Late, Dropped: w.Dropped, ErrorKinds: w.ErrorKinds,
		SLAUs: us(w.SLALatency), LimitUs: us(w.Limit), Hist: w.Hist, Note: w.Note,
		Trend: store.ProbeTrend{Seconds: w.Trend.Seconds, Judged: w.Trend.Judged, P: w.Trend.P,
			SlopeUs: us(w.Trend.Slope), RiseUs: us(w.Trend.Rise), Unstable: w.Trend.Unstable},
	}
	if sw.Start.IsZero() {
		sw.Start = time.Now()
	}
	for _, p := range store.ProbePercentiles {
		sw.Percentiles = append(sw.Percentiles, us(WindowPercentile(w, p)))
	}
	for _, s := range w.Seconds {
		sw.Seconds = append(sw.Seconds, store.ProbeSecond{
			Index: s.Index, Sent: s.Sent, Completed: s.Completed, Errors: s.Errors, Late: s.Late, Dropped: s.Dropped,
			P50Us: us(s.P50), P90Us: us(s.P90), RTTUs: us(s.RTT), Pass: s.Pass,
		})
	}
	return sw
}

// storeBaseline converts the unloaded latency for the results store
// (milliseconds to microseconds).
func storeBaseline(b probe.Baseline) store.ProbeBaseline {
	return store.ProbeBaseline{Rate: b.Rate, Duration: b.Duration, Start: b.Start, Completed: b.Completed, Errors: b.Errors,
		LatencyUs: b.Latency * 1000, P90Us: b.P90 * 1000, RTTUs: b.RTT * 1000, UnloadedUs: b.Unloaded * 1000, Tries: b.Tries, Hist: b.Hist}
}

// probeConfigJSON records every parameter the probe ran with, and the
// treatment it probed ("" without treatments).
func probeConfigJSON(c probe.Config, l spec.Load, treatment string) string {
	b, _ := json.Marshal(map[string]any{"treatment": treatment,
		"percentile": c.Percentile, "threshold": c.Threshold.String(), "start_rate": c.StartRate,
		"window": c.Window.String(), "margin": c.Margin.String(), "rtt_spike": c.RTTSpike.String(),
		"baseline_rate": c.BaselineRate, "baseline_window": c.BaselineWindow.String(), "unstable_p": c.UnstableP,
		"fine_rate": c.FineRate, "max_rate": c.MaxRate, "max_windows": c.MaxWindows, "max_retries": c.MaxRetries,
		"floor_rate": c.FloorRate, "client_shortfall": c.ClientShortfall, "max_error_ratio": c.MaxErrorRatio,
		"rtt_every": c.RTTEvery.String(), "percentiles": probe.Percentiles,
		"arrival": l.Arrival, "max_in_flight": l.MaxInFlight, "late_after": l.LateAfter.String(),
		"drop_after": l.DropAfter.String(), "timeout": l.Timeout.String(),
	})
	return string(b)
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

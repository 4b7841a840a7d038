package campaign

import (
	"context"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// opStats are a session's counts of one interval, reads and writes apart.
type opStats struct{ read, write kindStats }

type kindStats struct {
	count, errors, late, skipped int64
	kinds                        map[string]int64
	hist                         *hdrhistogram.Histogram
}

func newOpStats() *opStats {
	return &opStats{read: kindStats{hist: load.NewHistogram()}, write: kindStats{hist: load.NewHistogram()}}
}

func (st *opStats) of(write bool) *kindStats {
	if write {
		return &st.write
	}
	return &st.read
}

// add counts one operation: its latency (in the engine's microseconds)
// when it succeeded, its error's kind when not.
func (st *opStats) add(write bool, lat time.Duration, err error, late bool) {
	k := st.of(write)
	if late {
		k.late++
	}
	if err != nil {
		k.errors++
		if k.kinds == nil {
			k.kinds = map[string]int64{}
		}
		k.kinds[errKind(err)]++
		return
	}
	k.count++
	_ = k.hist.RecordValue(min(max(lat.Microseconds(), 1), 60_000_000))
}

func (st *opStats) skip(write bool, n int64) { st.of(write).skipped += n }

// run runs the load of one run: the YCSB mix through the load engine, the
// consistency sessions beside it (started by cfg.Started), or, with
// `with: only`, the sessions alone, whose reads and writes then make the
// run's intervals (as read and update) and its result.
func (cr *consistencyRun) run(ctx context.Context, cfg load.Config, tgt target.Target, gen *workload.Generator, sink load.Sink) (load.Result, error) {
	if cr == nil || cr.cfg.With != spec.ConsistencyOnly {
		return load.Run(ctx, cfg, tgt, gen, sink)
	}
	t0 := time.Now()
	iv := cfg.Interval
	warm := (cfg.Warmup + iv - 1) / iv * iv
	end := warm + cfg.Measure
	res := load.Result{Start: t0, MeasureStart: warm, MeasureEnd: end}
	if cfg.Started != nil {
		cfg.Started(t0)
	}
	var err error
	for i := int64(0); time.Duration(i)*iv < end; i++ {
		at := time.Duration(i) * iv
		d := min(iv, end-at)
		select {
		case <-ctx.Done():
			res.Interrupted = true
			res.MeasureEnd = max(time.Since(t0), warm)
		case <-time.After(time.Until(t0.Add(at + d))):
		}
		phase := load.Measure
		if at < warm {
			phase = load.Warmup
		}
		tick := load.Tick{Index: i, At: t0.Add(at), Start: at, Duration: d, Phase: phase, Stats: cr.take(phase)}
		for _, o := range tick.Stats {
			tot := &res.Measured
			if phase == load.Warmup {
				tot = &res.Warmup
			}
			tot.Completed += o.Count
			tot.Errors += o.Errors
			tot.Late += o.Late
			tot.Dropped += o.Dropped
		}
		if err == nil && sink != nil {
			err = sink(tick)
		}
		if res.Interrupted || err != nil {
			break
		}
	}
	if secs := (res.MeasureEnd - res.MeasureStart).Seconds(); secs > 0 {
		res.Throughput = float64(res.Measured.Completed) / secs
	}
	return res, err
}

// take merges the sessions' counts of the interval that just ended into
// the engine's per-operation statistics: reads as read, writes as update.
func (cr *consistencyRun) take(phase load.Phase) []load.OpStats {
	out := []load.OpStats{
		{Phase: phase, Op: workload.Read, Hist: load.NewHistogram()},
		{Phase: phase, Op: workload.Update, Hist: load.NewHistogram()},
	}
	for _, s := range cr.sessions {
		st := s.take()
		for i, k := range []*kindStats{&st.read, &st.write} {
			o := &out[i]
			o.Count += k.count
			o.Errors += k.errors
			o.Late += k.late
			o.Dropped += k.skipped
			o.Hist.Merge(k.hist)
			for kind, n := range k.kinds {
				if o.ErrorKinds == nil {
					o.ErrorKinds = map[string]int64{}
				}
				o.ErrorKinds[kind] += n
			}
		}
	}
	return out
}

// Package historytest generates synthetic consistency histories whose
// answers are known from the plan that made them, for the tests of the
// staleness, session-guarantee and linearizability checks: the expected
// figures are computed here from the plan (planted lags and planted
// violations), never by the code under test.
package historytest

import (
	"fmt"
	"math/rand"
	"sort"

	"github.com/headroom-dev/headroom/internal/history"
)

// Config shapes a generated history.
//
// The grid: each of Keys keys has its own writer session, which writes
// versions 1..Writes; version n completes at n × PeriodNS (invoked
// StepNS/4 earlier). Per read level, each key has a reader session that
// reads it every StepNS from PeriodNS until Writes+1 periods, each read
// taking StepNS/4. The plan gives every (level, key, version) a lag m,
// drawn from 0..MaxLag[level]: version n becomes visible at that level
// m×StepNS + StepNS/2 after it completed, and a read returns the newest
// visible version (0, populate's, before any). So the reads invoked at
// 0, 1, ..., m steps after the write return version n-1, the read at m+1
// steps returns n: t-visibility is exactly m × StepNS. MaxLag×StepNS +
// StepNS/2 must stay below PeriodNS, so versions become visible in order.
type Config struct {
	Seed       int64
	Keys       int
	Writes     int
	PeriodNS   int64
	StepNS     int64
	Levels     []string       // read levels
	MaxLag     map[string]int // per read level, in steps
	WriteLevel string
	// Replica serves each read level's grid reads; writes are served by
	// "primary".
	Replica map[string]string
	// Plant adds, per level, this many known violations of each session
	// guarantee on keys of their own (see Generate).
	Plant map[string]Plant
}

// Plant is how many violations of each guarantee to plant at one level.
type Plant struct {
	MonotonicRead, ReadYourWrites, MonotonicWrite int
}

// WriteID names one version of one key.
type WriteID struct {
	Key     string
	Version int64
}

// Plan is a generated history and its known answers.
type Plan struct {
	Ops []history.Op
	// Lag is each grid write's planned lag in steps, per read level.
	Lag map[string]map[WriteID]int
	// Visibility is each grid write's t-visibility in ns, per read level.
	Visibility map[string]map[WriteID]int64
	// Uncertainty is the clock uncertainty of every window at a level,
	// given the uncertainties by replica passed to Generate.
	Uncertainty map[string]int64
	// CurveReads and CurveFresh are, per read level and per number of
	// steps j after the newest completed write, the grid reads invoked j
	// steps after it and how many of them returned it.
	CurveReads, CurveFresh map[string][]int
	// KStale counts the grid reads per level by how many versions behind
	// they were.
	KStale map[string]map[int64]int
	// Session-guarantee answers per level (planted; the grid has none).
	Reads, WritePairs                             map[string]int
	MonotonicRead, ReadYourWrites, MonotonicWrite map[string]int
	// NonLinearizable are the grid keys whose writes and reads at a level
	// are not linearizable (some lag >= 1: a read invoked after a write
	// completed returned the version before it).
	NonLinearizable map[string][]string
}

// Generate makes the history cfg describes; clock gives the clock
// uncertainty in ns of each replica ("primary" and the levels' replicas)
// for Plan.Uncertainty.
//
// Planted violations use keys and sessions of their own, after the grid:
//   - monotonic read at level L: a writer writes 1 and 2; a reader at L
//     reads 2 from replica r1, then 1 from replica r2;
//   - read your writes at L: a session writes 1 and reads 0; then its write
//     of 2 fails and it reads 1, its write of 3 has an unknown outcome and
//     it reads 1 (neither of these is a violation);
//   - monotonic write at L: a session writes 1 then 2 at L; a reader at L
//     reads 2, then 1, both from replica r1 (also a monotonic read
//     violation of that reader).
func Generate(cfg Config, clock map[string]int64) Plan {
	rng := rand.New(rand.NewSource(cfg.Seed))
	p := Plan{Lag: map[string]map[WriteID]int{}, Visibility: map[string]map[WriteID]int64{},
		Uncertainty: map[string]int64{}, CurveReads: map[string][]int{}, CurveFresh: map[string][]int{},
		KStale: map[string]map[int64]int{}, Reads: map[string]int{}, WritePairs: map[string]int{},
		MonotonicRead: map[string]int{}, ReadYourWrites: map[string]int{}, MonotonicWrite: map[string]int{},
		NonLinearizable: map[string][]string{}}
	step, period := cfg.StepNS, cfg.PeriodNS
	perPeriod := int(period / step)
	for i := range cfg.Keys {
		key := fmt.Sprintf("k%d", i)
		for n := 1; n <= cfg.Writes; n++ {
			done := int64(n) * period
			p.Ops = append(p.Ops, history.Op{Process: i, Kind: history.Write, Key: key, Value: int64(n),
				InvokeNS: done - step/4, CompleteNS: done, Outcome: history.OK, Replica: "primary", Level: cfg.WriteLevel})
		}
		p.WritePairs[cfg.WriteLevel] += cfg.Writes - 1
	}
	for li, level := range cfg.Levels {
		p.Lag[level] = map[WriteID]int{}
		p.Visibility[level] = map[WriteID]int64{}
		p.Uncertainty[level] = clock["primary"] + clock[cfg.Replica[level]]
		p.CurveReads[level] = make([]int, perPeriod)
		p.CurveFresh[level] = make([]int, perPeriod)
		p.KStale[level] = map[int64]int{}
		for i := range cfg.Keys {
			key := fmt.Sprintf("k%d", i)
			visibleAt := make([]int64, cfg.Writes+1) // by version
			stale := false
			for n := 1; n <= cfg.Writes; n++ {
				m := rng.Intn(cfg.MaxLag[level] + 1)
				id := WriteID{key, int64(n)}
				p.Lag[level][id] = m
				p.Visibility[level][id] = int64(m) * step
				visibleAt[n] = int64(n)*period + int64(m)*step + step/2
				stale = stale || m >= 1
				// The answers: per step j after the write, fresh iff j > m.
				for j := range perPeriod {
					p.CurveReads[level][j]++
					if j > m {
						p.CurveFresh[level][j]++
						p.KStale[level][0]++
					} else {
						p.KStale[level][1]++
					}
				}
			}
			if stale {
				p.NonLinearizable[level] = append(p.NonLinearizable[level], key)
			}
			proc := 1000 + li*cfg.Keys + i
			for t := period; t < int64(cfg.Writes+1)*period; t += step {
				v := int64(0)
				for n := 1; n <= cfg.Writes && visibleAt[n] <= t; n++ {
					v = int64(n)
				}
				p.Ops = append(p.Ops, history.Op{Process: proc, Kind: history.Read, Key: key, Value: v,
					InvokeNS: t, CompleteNS: t + step/4, Outcome: history.OK, Replica: cfg.Replica[level], Level: level})
				p.Reads[level]++
			}
		}
	}
	p.plant(cfg)
	sort.SliceStable(p.Ops, func(i, j int) bool { return p.Ops[i].InvokeNS < p.Ops[j].InvokeNS })
	return p
}

// plant adds the planted violations after the grid.
func (p *Plan) plant(cfg Config) {
	t := int64(cfg.Writes+2) * cfg.PeriodNS
	proc := 100000
	levels := make([]string, 0, len(cfg.Plant))
	for l := range cfg.Plant {
		levels = append(levels, l)
	}
	sort.Strings(levels)
	op := func(process int, kind, key string, v int64, outcome, replica, level string) {
		p.Ops = append(p.Ops, history.Op{Process: process, Kind: kind, Key: key, Value: v,
			InvokeNS: t, CompleteNS: t + 10, Outcome: outcome, Replica: replica, Level: level})
		t += 20
	}
	for _, level := range levels {
		pl := cfg.Plant[level]
		for i := range pl.MonotonicRead {
			key := fmt.Sprintf("s-mr-%s-%d", level, i)
			op(proc, history.Write, key, 1, history.OK, "primary", cfg.WriteLevel)
			op(proc, history.Write, key, 2, history.OK, "primary", cfg.WriteLevel)
			op(proc+1, history.Read, key, 2, history.OK, "r1", level)
			op(proc+1, history.Read, key, 1, history.OK, "r2", level)
			p.MonotonicRead[level]++
			p.Reads[level] += 2
			p.WritePairs[cfg.WriteLevel]++
			proc += 2
		}
		for i := range pl.ReadYourWrites {
			key := fmt.Sprintf("s-ryw-%s-%d", level, i)
			op(proc, history.Write, key, 1, history.OK, "primary", level)
			op(proc, history.Read, key, 0, history.OK, "r1", level)
			op(proc, history.Write, key, 2, history.Fail, "primary", level)
			op(proc, history.Read, key, 1, history.OK, "r1", level)
			op(proc, history.Write, key, 3, history.Info, "primary", level)
			op(proc, history.Read, key, 1, history.OK, "r1", level)
			p.ReadYourWrites[level]++
			p.Reads[level] += 3
			proc++
		}
		for i := range pl.MonotonicWrite {
			key := fmt.Sprintf("s-mw-%s-%d", level, i)
			op(proc, history.Write, key, 1, history.OK, "primary", level)
			op(proc, history.Write, key, 2, history.OK, "primary", level)
			op(proc+1, history.Read, key, 2, history.OK, "r1", level)
			op(proc+1, history.Read, key, 1, history.OK, "r1", level)
			p.MonotonicWrite[level]++
			p.MonotonicRead[level]++
			p.WritePairs[level]++
			p.Reads[level] += 2
			proc += 2
		}
	}
}

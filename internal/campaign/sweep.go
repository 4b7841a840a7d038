package campaign

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
)

// sweeper follows one treatment's sweep (spec.Sweep, seed-digest §2): the
// plan's levels run in increasing order, each level's repetitions
// together; once a level's runs have ended the level is judged, and the
// first level that saturates ends the treatment's plan. Every verdict is
// stored as an event, so that --resume, the report and "nothing to resume"
// know where the sweep stopped without judging again.
type sweeper struct {
	sw      *spec.Sweep
	stopped bool
	stop    int // level index of the saturating level, when stopped
}

// sweepCPUOf says whose CPU a sweep judges for a treatment (see cpu).
func sweepCPUOf(t results.Treatment, serverPIDs []int) string {
	switch {
	case len(t.Target.Hosts) > 0:
		return "lab host " + strings.Join(t.Target.Hosts, ", ")
	case t.Target.InProcess:
		return ""
	case len(serverPIDs) > 0:
		return fmt.Sprintf("the server's processes as a share of this machine's %d CPUs", runtime.NumCPU())
	}
	return ""
}

// startSweep records the treatment's sweep and, when the campaign resumes,
// walks the levels completed in earlier sessions in order, using their
// stored verdicts (a level completed without one, when the process ended
// between its last run and its verdict, is judged now), to learn whether
// the sweep already stopped.
func (ex *executor) startSweep(done map[int]bool) error {
	sw := ex.s.Sweep()
	if sw == nil {
		return nil
	}
	ex.sweep = &sweeper{sw: sw}
	r, err := results.New(ex.st)
	if err != nil {
		return &storeError{err}
	}
	t, _ := r.Treatment(ex.tr.name)
	p := results.SweepPlan{Treatment: ex.tr.name, Model: ex.s.Load.Model, From: sw.From, Step: sw.Step, Max: sw.Max, MaxLevels: sw.MaxLevels,
		Levels: len(ex.levels), CPUPct: sw.CPUPct, ErrorPct: sw.ErrorPct, SLO: sw.SLO, CPUOf: sweepCPUOf(t, serverPIDs(ex.tgt))}
	detail, _ := json.Marshal(p)
	if err := ex.st.AddEvent(store.Event{Time: time.Now(), Kind: results.EventSweep, Detail: string(detail)}); err != nil {
		return &storeError{err}
	}
	evs, err := ex.st.Events(-1)
	if err != nil {
		return &storeError{err}
	}
	judged := map[int]results.SweepVerdict{}
	if prev := results.SweepOf(evs, ex.tr.name); prev != nil {
		for _, v := range prev.Levels {
			judged[v.LevelIndex] = v
		}
	}
	reps := max(ex.s.Repetitions, 1)
	for li := range ex.levels {
		for rep := range reps {
			if !done[ex.tr.slotBase+li*reps+rep] {
				return nil
			}
		}
		v, ok := judged[li]
		if !ok {
			if v, err = ex.judgeLevel(li); err != nil {
				return err
			}
		}
		if v.Saturated {
			ex.sweep.stopped, ex.sweep.stop = true, li
			return nil
		}
	}
	return nil
}

// beyondSweep reports whether p lies above the level at which the sweep
// stopped, so that it is not run.
func (ex *executor) beyondSweep(p spec.PlannedRun) bool {
	return ex.sweep != nil && ex.sweep.stopped && p.LevelIndex > ex.sweep.stop
}

// afterSweepRun judges p's level once p was its last run in the plan, and
// stops the sweep when the level saturated.
func (ex *executor) afterSweepRun(i int) error {
	if ex.sweep == nil || ex.sweep.stopped {
		return nil
	}
	p := ex.plan[i]
	if i+1 < len(ex.plan) && ex.plan[i+1].LevelIndex == p.LevelIndex {
		return nil
	}
	v, err := ex.judgeLevel(p.LevelIndex)
	if err != nil {
		return err
	}
	if v.Saturated {
		ex.sweep.stopped, ex.sweep.stop = true, p.LevelIndex
		ex.prog.Note(fmt.Sprintf("sweep: %s saturated (%s); no higher level runs", ex.levelLabel(v.Level), strings.Join(v.Reasons, "; ")))
	}
	return nil
}

// sweepPlanned counts the plan's runs the sweep runs: those up to the level
// it stopped at, or all of them.
func (ex *executor) sweepPlanned() int {
	n := 0
	for _, p := range ex.plan {
		if !ex.beyondSweep(p) {
			n++
		}
	}
	return n
}

// judgeLevel judges one level of the sweep from the store and records the
// verdict as an event of the level's last run. It reads the level's ended
// runs (completed or failed: a run that failed because the target refused
// every connection is the clearest saturation of all), the last of each
// plan slot.
func (ex *executor) judgeLevel(li int) (results.SweepVerdict, error) {
	r, err := results.New(ex.st)
	if err != nil {
		return results.SweepVerdict{}, &storeError{err}
	}
	v := results.SweepVerdict{Treatment: ex.tr.name, LevelIndex: li, Level: ex.levels[li]}
	bySlot := map[int]store.Run{}
	for _, run := range r.Runs() {
		if run.Treatment != ex.tr.name || run.LevelIndex != li || run.Slot < ex.tr.slotBase || run.Slot >= ex.tr.slotBase+spec.SlotsPerTreatment {
			continue
		}
		if run.Status != store.StatusCompleted && run.Status != store.StatusFailed {
			continue
		}
		if prev, ok := bySlot[run.Slot]; !ok || run.ID > prev.ID {
			bySlot[run.Slot] = run
		}
	}
	var runs []store.Run
	for _, run := range bySlot {
		runs = append(runs, run)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	v.Runs = len(runs)
	if len(runs) == 0 {
		v.Notes = append(v.Notes, "no run of this level ended, so it could not be judged")
		return v, nil
	}
	sw := ex.sweep.sw
	ex.judgeErrors(r, runs, sw, &v)
	if err := ex.judgeSLO(r, li, sw, &v); err != nil {
		return v, err
	}
	if err := ex.judgeCPU(r, runs, sw, &v); err != nil {
		return v, err
	}
	v.Saturated = len(v.Reasons) > 0
	detail, _ := json.Marshal(v)
	if err := ex.st.AddEvent(store.Event{RunID: runs[len(runs)-1].ID, Time: time.Now(), Kind: results.EventSweepLevel, Detail: string(detail)}); err != nil {
		return v, &storeError{err}
	}
	return v, nil
}

// judgeErrors applies the error rule: the share of the level's sent
// requests that failed, over all its ended runs. Refused connections are
// failed requests like any other; the commonest error kind is named.
func (ex *executor) judgeErrors(r *results.Results, runs []store.Run, sw *spec.Sweep, v *results.SweepVerdict) {
	var sent, failed int64
	kinds := map[string]int64{}
	for _, run := range runs {
		sent += run.Summary.Sent
		failed += run.Summary.Errors
		ivs, err := r.Intervals(run.ID, "measure")
		if err != nil {
			continue // the kind only names the errors; the count stands
		}
		for _, iv := range ivs {
			for k, n := range iv.ErrorKinds {
				kinds[k] += n
			}
		}
	}
	if sent == 0 {
		v.Notes = append(v.Notes, "no request was sent in the measured phases, so the error share is unknown")
		return
	}
	v.ErrorPct = 100 * float64(failed) / float64(sent)
	if sw.ErrorPct > 0 && v.ErrorPct > sw.ErrorPct {
		reason := fmt.Sprintf("%.3g%% of requests failed (more than %s%%)", v.ErrorPct, strconv.FormatFloat(sw.ErrorPct, 'f', -1, 64))
		if k := commonest(kinds); k != "" {
			reason += ", mostly " + k
		}
		v.Reasons = append(v.Reasons, reason)
	}
}

// commonest is the error kind with the highest count ("" for none).
func commonest(kinds map[string]int64) string {
	best, n := "", int64(0)
	for k, c := range kinds {
		if c > n || (c == n && k < best) {
			best, n = k, c
		}
	}
	return best
}

// judgeSLO applies the SLO rule with the load-response table's own
// judgement (analysis/levels), over the level's completed runs.
func (ex *executor) judgeSLO(r *results.Results, li int, sw *spec.Sweep, v *results.SweepVerdict) error {
	if !sw.SLO || ex.s.SLO == nil {
		return nil
	}
	in, _, err := levels.FromResults(r, ex.tr.name)
	if err != nil {
		return &storeError{err}
	}
	for _, l := range levels.Summarize(in).Levels {
		if l.Index != li || l.SLO == nil {
			continue
		}
		pass := l.SLO.Pass
		v.SLOPass = &pass
		if !pass {
			slo := ex.s.SLO
			what := "requests"
			if slo.Operation != "" {
				what = slo.Operation + " requests"
			}
			p99 := time.Duration(l.SLO.Value.Mean * float64(time.Microsecond)).Round(10 * time.Microsecond)
			v.Reasons = append(v.Reasons, fmt.Sprintf("the SLO failed: %.1f%% of %s within %v, below the %s%% asked (p%s = %v)",
				100*l.SLO.Within.Mean, what, slo.Threshold.Duration, num(slo.Percentile), num(slo.Percentile), p99))
		}
		return nil
	}
	v.Notes = append(v.Notes, "no run of this level completed, so the SLO could not be judged")
	return nil
}

// judgeCPU applies the CPU rule to the target's CPU, never the load
// generator's (issue 14: theta is the target's): the busiest of the lab
// hosts its managed server runs on; else the processes of a server
// Headroom runs on this machine, summed and taken as a share of the
// machine's CPUs (what 100% means for a server that may use every core).
// An in-process target shares the generator's process, whose CPU cannot
// be split, and a server Headroom does not run is not monitored: for
// them the rule cannot fire, and a note says so.
func (ex *executor) judgeCPU(r *results.Results, runs []store.Run, sw *spec.Sweep, v *results.SweepVerdict) error {
	if sw.CPUPct <= 0 {
		return nil
	}
	t, _ := r.Treatment(ex.tr.name)
	var per []float64
	var of string
	switch pids := serverPIDs(ex.tgt); {
	case len(t.Target.Hosts) > 0:
		of = "lab host"
		for _, run := range runs {
			xs, err := r.Samples(store.SampleFilter{RunID: run.ID})
			if err != nil {
				return &storeError{err}
			}
			busiest, host := math.NaN(), ""
			for _, h := range t.Target.Hosts {
				if m, ok := meanOver(xs, run, func(s monitor.Sample) bool {
					return s.Host == h && s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct
				}, false); ok && !(m <= busiest) {
					busiest, host = m, h
				}
			}
			if host != "" {
				per = append(per, busiest)
				of = "lab host " + host
			}
		}
	case t.Target.InProcess:
		v.Notes = append(v.Notes, "the CPU rule does not apply: the target runs inside the load generator's process, whose CPU cannot be split between them")
		return nil
	case len(pids) > 0:
		of = fmt.Sprintf("the server's processes (a share of this machine's %d CPUs)", runtime.NumCPU())
		want := map[string]bool{}
		for _, pid := range pids {
			want[monitor.ResourceProcPrefix+strconv.Itoa(pid)] = true
		}
		for _, run := range runs {
			xs, err := r.Samples(store.SampleFilter{RunID: run.ID})
			if err != nil {
				return &storeError{err}
			}
			if m, ok := meanOver(xs, run, func(s monitor.Sample) bool {
				return want[s.Resource] && s.Metric == monitor.ProcCPUPct
			}, true); ok {
				per = append(per, m/float64(runtime.NumCPU()))
			}
		}
	default:
		v.Notes = append(v.Notes, "the CPU rule cannot fire: the target's CPU is not monitored (Headroom does not run its server)")
		return nil
	}
	if len(per) == 0 {
		v.Notes = append(v.Notes, "the CPU rule cannot fire: no CPU sample of the target fell in this level's measured phases")
		return nil
	}
	var sum float64
	for _, x := range per {
		sum += x
	}
	mean := sum / float64(len(per))
	v.CPU = &mean
	if mean >= sw.CPUPct {
		v.Reasons = append(v.Reasons, fmt.Sprintf("the target's CPU averaged %.1f%% (%s), reaching %s%%", mean, of, num(sw.CPUPct)))
	}
	return nil
}

// meanOver is the mean over a run's measured phase of the samples match
// selects; with sum, the samples of one interval (several processes) are
// added before the mean is taken.
func meanOver(xs []monitor.Sample, run store.Run, match func(monitor.Sample) bool, sum bool) (float64, bool) {
	from, to := run.Summary.MeasureStart, run.Summary.MeasureEnd
	if from.IsZero() || !to.After(from) {
		return 0, false
	}
	byStart := map[time.Time]float64{}
	var n int
	var total float64
	for _, s := range xs {
		if !match(s) || s.Start.Before(from) || !s.Start.Before(to) {
			continue
		}
		if sum {
			byStart[s.Start] += s.Value
			continue
		}
		total += s.Value
		n++
	}
	if sum {
		for _, x := range byStart {
			total += x
		}
		n = len(byStart)
	}
	if n == 0 {
		return 0, false
	}
	return total / float64(n), true
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// sweepStops are the level indexes at which the campaign's sweeps stopped,
// by treatment name, as the store's verdicts say.
type sweepStops map[string]int

// readSweepStops reads where every sweep of s stopped in earlier sessions.
func readSweepStops(s *spec.Spec, st *store.Store) (sweepStops, error) {
	out := sweepStops{}
	evs, err := st.Events(-1)
	if err != nil {
		return nil, err
	}
	names := []string{""}
	if len(s.Treatments) > 0 {
		names = names[:0]
		for _, t := range s.Treatments {
			names = append(names, t.Name)
		}
	}
	for _, name := range names {
		if sw := results.SweepOf(evs, name); sw != nil {
			if v, ok := sw.Stop(); ok {
				out[name] = v.LevelIndex
			}
		}
	}
	return out, nil
}

// beyond reports whether a run of block b lies above the level at which
// its treatment's sweep stopped.
func (ss sweepStops) beyond(s *spec.Spec, b spec.Block, p spec.PlannedRun) bool {
	name := ""
	if len(s.Treatments) > 0 {
		name = s.Treatments[b.Treatment].Name
	}
	stop, ok := ss[name]
	return ok && p.LevelIndex > stop
}

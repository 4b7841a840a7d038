package load

import (
	"fmt"
	"math"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The client-limit verdict (docs/measurement.md, "Client limits") decides
// whether a run measured the load generator rather than the target. A run
// the verdict calls client-limited is left out of the knee and the capacity
// estimate, so it must be proportional: a little lateness on a shared
// machine is shown, not used to throw the level away. An open-loop run is
// client-limited when
//
//  1. the client's CPU was saturated: the process used at least
//     cpuBusyShare of the CPU it may use (Result.CPUs: its cores, or less
//     under a fractional cgroup quota), or the cgroup that sets its quota
//     was throttled in at least throttledBusyShare of its periods
//     (cpuquota.go); and, for an in-process target, the target did not
//     use most of that CPU, see below;
//  2. the client could not keep the schedule: it sent more than
//     scheduleSlack of the offered requests late by its own delay (their
//     slot was free) by more than X (below), or dropped them while its own
//     delays dominated. Sends late by less than X are not counted: a
//     client whose timers fire a few milliseconds late on a machine it
//     shares with the servers under test still offers the rate, and the
//     delay is in the latency it records (a Cassandra ring at a quarter
//     of a core per node had 5-11% of sends late by 1 ms or more, none of
//     them by a tenth of the p99); or
//  3. its lateness is a material share of the percentile being judged: more
//     than (100-p)% of the offered requests were sent late by the client
//     itself by more than X = max(late_after, latenessShare x the measured
//     p-th percentile). A p-th percentile tolerates (100-p)% of requests
//     above it; fewer late requests than that, or requests late by less
//     than a tenth of its value, cannot move it materially.
//
// An in-process target shares the process's CPU with the engine, and the
// client can be told apart from it only by the engine's own share of that
// CPU. When the target used most of it (targetCPU), the CPU's saturation
// and the late sends are the target's, not the load generator's: the level
// is kept, with a note, and its latency, measured from the intended time,
// already includes the delay.
// The target's CPU is bounded twice: by the process's CPU minus the
// engine's (its calibrated cost per request times the request rate,
// calibrate.go), and by Little's law, because the target works only inside
// its calls: at most (completions/s x mean latency) cores. A closed-loop
// run is client-limited by rule 1 only.
const (
	cpuBusyShare       = 0.90  // of the CPU the process may use
	throttledBusyShare = 0.5   // of the quota's periods in which the cgroup had work
	scheduleSlack      = 0.05  // of the offered requests, sent late by the client or dropped
	latenessShare      = 0.10  // of the judged percentile's value
	behindNoise        = 0.001 // late or dropped below this share: nothing to say
	defaultPercentile  = 99
)

// ClientFacts are what the client-limit verdict was judged from, beyond the
// run's totals and CPU.
type ClientFacts struct {
	// EngineCPU is the CPU the load generator itself used over the
	// measured phase, % of one core: the whole process's (ClientCPU) for
	// a target outside the process; for an in-process target, the
	// engine's calibrated cost per request times the request rate, at
	// most the process's.
	EngineCPU float64
	// Lateness holds, in µs, how late the client sent each request it
	// sent late by its own delay (Totals.LateWake) in the measured phase;
	// nil when none was.
	Lateness *hdrhistogram.Histogram
	// Latency is the measured phase's latency of successful requests, all
	// operations, in µs; nil when none succeeded.
	Latency *hdrhistogram.Histogram
	// Delay is the client-side delay of the measured phase: how long the
	// process's goroutines waited for a processor once runnable
	// (clientdelay.go). It is reported beside the percentiles, and the
	// run's note warns when it is a material share of the judged one.
	Delay ClientDelay
	// ProcessorWait is how long the client's threads waited for a
	// processor per second of the measured phase (pressure.go); -1 when
	// unknown. A client that sent requests late with little CPU of its own
	// and waited this way was held up by other work on the machine.
	ProcessorWait float64
	// Throttling is what the cgroup that sets the client's CPU quota
	// counted over the measured phase (cpuquota.go); zero without a quota.
	Throttling Throttling
}

// processorBusyWait is the wait per second above which a late client's
// note says the machine's other work, not the engine, held it up.
const processorBusyWait = 0.1

// verdictFacts gathers ClientFacts while a run goes: workers report their
// own send delays, the interval loop the measured latency.
type verdictFacts struct {
	mu       sync.Mutex
	lateness *hdrhistogram.Histogram
	latency  *hdrhistogram.Histogram
}

// clientLate records that a request of phase p was sent lateness ns after
// its intended time although its slot was free.
func (f *verdictFacts) clientLate(p Phase, lateness int64) {
	if p != Measure {
		return
	}
	f.mu.Lock()
	if f.lateness == nil {
		f.lateness = hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	}
	_ = f.lateness.RecordValue(max(lateness/int64(time.Microsecond), 1))
	f.mu.Unlock()
}

// tick merges an interval's measured-phase latency.
func (f *verdictFacts) tick(t Tick) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range t.Stats {
		if s.Phase != Measure || s.Hist == nil || s.Hist.TotalCount() == 0 {
			continue
		}
		if f.latency == nil {
			f.latency = hdrhistogram.New(s.Hist.LowestTrackableValue(), s.Hist.HighestTrackableValue(), int(s.Hist.SignificantFigures()))
		}
		f.latency.Merge(s.Hist)
	}
}

// judge fills r.Client from f and decides whether the client was the
// limit, with one sentence on late, dropped or client-limited requests.
func (r *Result) judge(cfg Config, f *verdictFacts) {
	f.mu.Lock()
	r.Client.Lateness, r.Client.Latency = f.lateness, f.latency
	f.mu.Unlock()
	r.Client.EngineCPU = r.ClientCPU
	if cfg.InProcess && !r.Interrupted {
		if per := engineCPUPerRequest(); per > 0 {
			r.Client.EngineCPU = min(r.ClientCPU, 100*per*r.SentRate)
		}
	}
	r.ClientLimited, r.Note = Verdict(*r, cfg)
	if d := delayNote(r.Client.Delay, r.Client, cfg.Percentile); d != "" {
		if r.Note != "" {
			r.Note += "; "
		}
		r.Note += d
	}
}

// Verdict is the client-limit verdict on a finished run (see the rules
// above): whether the client was the limit, and one sentence on late,
// dropped or client-limited requests ("" when there is nothing to say).
// It reads the measured totals, Throughput, ClientCPU, Cores and Client of
// r, and Model, LateAfter, MaxInFlight, InProcess and Percentile of cfg.
func Verdict(r Result, cfg Config) (bool, string) {
	m := r.Measured
	offered := m.Sent() + m.Dropped
	busy := r.CPUSaturated()
	cpuText := fmt.Sprintf("client CPU %s of %s", cpuPct(r, r.ClientCPU), coresText(r))
	targetsCPU := false // the in-process target used most of the process's CPU
	if cfg.InProcess {
		t := targetCPU(r)
		targetsCPU = t >= 0.5*r.ClientCPU && r.ClientCPU > 0
		cpuText = fmt.Sprintf("process CPU %s of %s: the engine about %.1f%%, the in-process target about %s", cpuPct(r, r.ClientCPU), coresText(r), r.Client.EngineCPU, cpuPct(r, t))
	}
	if cfg.Model != "open" || offered == 0 {
		switch {
		case busy && !targetsCPU:
			return true, fmt.Sprintf("client CPU saturated (%s): throughput may be limited by the load generator", cpuText)
		case busy:
			return false, fmt.Sprintf("the process's CPU was saturated by the in-process target (%s): the target's saturation, not the client's", cpuText)
		}
		return false, ""
	}

	behind := float64(m.Late+m.Dropped) / float64(offered)
	if behind <= behindNoise {
		return false, ""
	}
	if busy && !targetsCPU {
		return true, fmt.Sprintf("client CPU saturated (%s) with %.2f%% of requests late or dropped: the load generator limited the rate", cpuText, 100*behind)
	}
	wake := float64(m.LateWake) / float64(offered)
	clientDrops := int64(0)
	if m.LateWake > 0 && 2*m.LateWake >= m.Late {
		clientDrops = m.Dropped // the client's own delays dominate the lateness
	}

	p := cfg.Percentile
	if p <= 0 || p >= 100 {
		p = defaultPercentile
	}
	x := cfg.LateAfter
	if h := r.Client.Latency; h != nil && h.TotalCount() > 0 {
		x = max(x, time.Duration(latenessShare*float64(h.ValueAtQuantile(p)))*time.Microsecond)
	}
	lateBeyond := countAbove(r.Client.Lateness, x.Microseconds())
	beyond := float64(lateBeyond) / float64(offered)
	missed := float64(lateBeyond+clientDrops) / float64(offered)
	tolerated := (100 - p) / 100
	material := missed > scheduleSlack || beyond > tolerated

	throttled := ""
	if t := throttleText(r); t != "" {
		throttled = "; the client's " + t
	}
	switch {
	case m.LateWake == 0:
		return false, fmt.Sprintf("%.2f%% of requests started late or were dropped because all %d in-flight slots were busy: the target fell behind the arrival rate and was the limit, not the client (more slots would queue more requests at the target, not serve more)%s", 100*behind, cfg.MaxInFlight, throttled)
	case material && targetsCPU && busy:
		return false, fmt.Sprintf("%.2f%% of requests were sent late while the in-process target used most of the saturated CPU (%s): the target's saturation, not the client's; their latency includes the delay", 100*missed, cpuText)
	case material && targetsCPU:
		return false, fmt.Sprintf("%.2f%% of requests were sent late, but the engine's own share of the process's CPU was small (%s): the delay is the in-process target's, not the load generator's; their latency includes it", 100*missed, cpuText)
	case missed > scheduleSlack:
		return true, fmt.Sprintf("the client could not keep the schedule: it sent %.2f%% of requests more than %v late by its own delay or dropped them, more than %.0f%% (%s)%s", 100*missed, x, 100*scheduleSlack, cpuText, machineText(r))
	case beyond > tolerated:
		return true, fmt.Sprintf("%.2f%% of requests were sent more than %v late by the client itself, more than the %s%% a p%s tolerates: the client's delay could set that percentile (%s)%s", 100*beyond, x, fmtNum(100-p), fmtNum(p), cpuText, machineText(r))
	case 2*m.LateWake >= m.Late+m.Dropped:
		by := ""
		if x > cfg.LateAfter {
			by = fmt.Sprintf(", %.2f%% by more than %v (a tenth of the p%s)", 100*beyond, x, fmtNum(p))
		}
		return false, fmt.Sprintf("%.2f%% of requests were sent more than %v late by the client itself%s, within the %s%% a p%s tolerates (%s); the level is kept and their latency includes the delay", 100*wake, cfg.LateAfter, by, fmtNum(100-p), fmtNum(p), cpuText)
	}
	return false, fmt.Sprintf("%.2f%% of requests started late or were dropped because all %d in-flight slots were busy: the target fell behind the arrival rate and was the limit, not the client (more slots would queue more requests at the target, not serve more); %.2f%% were sent late by the client itself%s", 100*behind, cfg.MaxInFlight, 100*wake, throttled)
}

// CPUSaturated reports whether the client's CPU was the limit of its own
// use (rule 1 above, before the in-process target is told apart): the
// process used at least cpuBusyShare of the CPU it may use, or the cgroup
// that sets its quota was throttled in at least throttledBusyShare of the
// periods in which it had work.
func (r Result) CPUSaturated() bool {
	return r.ClientCPU >= 100*cpuBusyShare*r.cpus() || r.Client.Throttling.Share() >= throttledBusyShare
}

// cpus is the CPU the process may use, in cores: CPUs, or Cores for a
// result that does not say (one built by hand, or by an older agent).
func (r Result) cpus() float64 {
	if r.CPUs > 0 {
		return r.CPUs
	}
	return float64(r.Cores)
}

// cpuPct prints v, % of one core, to a tenth when the process may use less
// than a core.
func cpuPct(r Result, v float64) string {
	if r.cpus() < 1 {
		return fmt.Sprintf("%.1f%%", v)
	}
	return fmt.Sprintf("%.0f%%", v)
}

// coresText is the CPU the process may use ("2 cores", "0.2 cores (its
// cgroup's CPU quota)"), with its cgroup's throttling when there was any.
func coresText(r Result) string {
	s := fmtNum(r.cpus()) + " cores"
	if r.CPUs > 0 && r.CPUs < float64(r.Cores) {
		s += " (its cgroup's CPU quota)"
	}
	if t := throttleText(r); t != "" {
		s += ", its " + t
	}
	return s
}

// throttleText says how often the cgroup that sets the client's CPU quota
// was throttled over the measured phase; "" when it was not. Its time is
// summed over the processors the cgroup was stopped on.
func throttleText(r Result) string {
	t := r.Client.Throttling
	if t.Throttled <= 0 {
		return ""
	}
	return fmt.Sprintf("cgroup was throttled in %d of %d quota periods (%.0f%%; %.1f s throttled, summed over processors, in %.1f s)", t.Throttled, t.Periods, 100*t.Share(), t.Time.Seconds(), t.Wall.Seconds())
}

// machineText explains a late client whose own CPU use was not saturated
// when its threads waited for processors: other processes held it up. A
// client its cgroup's quota throttled waited for that, not for other
// processes (a throttled thread counts as waiting for a processor), and
// coresText says so instead.
func machineText(r Result) string {
	w := r.Client.ProcessorWait
	if w < processorBusyWait || r.CPUSaturated() || r.Client.Throttling.Throttled > 0 {
		return ""
	}
	return fmt.Sprintf("; the machine's processors were busy: the client's threads waited %.2f s for one per second of the measured phase, so other work on this machine (the servers beside the client, or anything else) delayed the client's timers", w)
}

// targetCPU bounds an in-process target's CPU use over the measured phase
// (% of one core): the process's minus the engine's, and at most the time
// requests spent in the system (Little's law: completions/s x mean
// latency, in cores), because the target works only inside its calls.
func targetCPU(r Result) float64 {
	t := max(r.ClientCPU-r.Client.EngineCPU, 0)
	if h := r.Client.Latency; h != nil && h.TotalCount() > 0 {
		t = min(t, 100*r.Throughput*h.Mean()/1e6)
	} else {
		t = 0
	}
	return t
}

// countAbove counts the recorded values of h above limit. A bucket counts
// when its lowest equivalent value is above the limit, so the histogram's
// precision never makes the client look late when it was not.
func countAbove(h *hdrhistogram.Histogram, limit int64) int64 {
	if h == nil {
		return 0
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.From > limit {
			n += b.Count
		}
	}
	return n
}

// fmtNum prints a percentile or share without trailing zeros.
func fmtNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}

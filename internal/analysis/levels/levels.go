// Package levels is the load-response summary of a campaign: for every load
// level, the achieved throughput, late/dropped/error counts and the latency
// of each operation type, as mean and standard error across repetitions
// (seed-digest §1-2), and the first level at which the campaign's SLO fails.
// It is a pure function of data read from the results store.
package levels

import (
	"math"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/headroom-dev/headroom/internal/analysis/resources"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/store"
)

// SLO is a latency objective: Percentile % of the offered requests must
// succeed within Threshold. Op restricts it to one operation type ("" = all).
type SLO struct {
	Percentile float64
	Threshold  time.Duration
	Op         string
}

// RunData is one completed run, its measured phase folded (Folder), and
// the resource summary of its measured window.
type RunData struct {
	Run store.Run
	// Latencies are each operation type's successful requests over the
	// measured phase, and "all" every type's; a type none of whose rows
	// had a histogram has none.
	Latencies map[string]*Latencies
	// Offered counts each type's offered requests (succeeded, failed or
	// dropped), and "all" every type's.
	Offered map[string]int64
	Points  []Point // the measured phase interval by interval, or in at most MaxPoints buckets (Folder.BoundPoints)
	// Outside counts intervals a bounded fold left out of Points because
	// their start lies outside the measured phase (a damaged store).
	Outside   int
	Resources []resources.Host
	Server    []store.ServerInterval // server-side timings of the measured window, when the target reports them
}

// Input is everything Summarize needs.
type Input struct {
	Model string // "open" or "closed"
	Runs  []RunData
	SLO   *SLO
	// Schedule is the treatment's results.Load.Varies(): the offered rate
	// changed within each run ("steps" or "trace"), so a run is not one
	// level of a load-response curve.
	Schedule string
	// Disturbed names the treatment's designed faults during its runs
	// (results.Treatment.Disturbances); "" when none.
	Disturbed string
}

// Latency is one latency statistic of an operation across repetitions, in
// microseconds.
type Latency struct {
	Mean, P50, P95, P99, Max stats.Estimate
}

// OpRow is one operation type at one level; Op "all" merges every type.
type OpRow struct {
	Op      string
	Count   stats.Estimate // successful requests per run
	Latency Latency
	// Server is the server's mean execution time per statement (µs) and
	// Network the client mean minus it: the network and queueing delay mu
	// of seed-digest §2 (001 §III-A). N is 0 when the server reported none.
	Server, Network stats.Estimate
}

// SLOResult is the SLO check at one level.
type SLOResult struct {
	// Within is the fraction (0..1) of offered requests (completed, failed or
	// dropped) that succeeded within the threshold, across repetitions.
	Within stats.Estimate
	// Value is the SLO percentile of successful requests' latency, µs.
	Value stats.Estimate
	Pass  bool
}

// Level is one load level.
type Level struct {
	Index         int
	Level         float64 // offered rate (open) or clients (closed)
	Reps          int     // completed repetitions summarised
	Throughput    stats.Estimate
	Late          stats.Estimate
	Dropped       stats.Estimate
	Errors        stats.Estimate
	ClientLimited int // runs in which the client was the limit
	Notes         []string
	Ops           []OpRow
	SLO           *SLOResult
	Hosts         []HostRow // monitored hosts, when the campaign sampled resources
}

// HostRow is one monitored host at one level, across repetitions: the mean
// of the runs' mean CPU utilisation and the highest peak, the busiest disk
// (highest mean utilisation) and the mean network throughput.
type HostRow struct {
	Host        string
	CPUMean     float64 // NaN when CPU was not sampled
	CPUMax      float64
	Disk        string
	DiskUtil    float64
	DiskUtilMax float64
	NetBytes    float64 // NaN when the network was not sampled
}

// Summary is the whole campaign's load-response table.
type Summary struct {
	Model     string
	Levels    []Level
	SLO       *SLO
	FirstFail int // index into Levels of the first level failing the SLO; -1 = none
	LastPass  int // index of the highest level below FirstFail that passes; -1 = none
}

// perRun is what one run contributes to its level.
type perRun struct {
	resources                         []resources.Host
	throughput, late, dropped, errors float64
	limited                           bool
	note                              string
	hists                             map[string]*Latencies // by op, plus "all"
	within                            float64
	sloValue                          float64
	serverMean                        map[string]float64 // µs per statement, by op, plus "all"
}

// Summarize builds the load-response table.
func Summarize(in Input) Summary {
	byLevel := map[int][]perRun{}
	values := map[int]float64{}
	for _, rd := range in.Runs {
		r := rd.Run
		values[r.LevelIndex] = r.Level
		byLevel[r.LevelIndex] = append(byLevel[r.LevelIndex], summarizeRun(rd, in.SLO))
	}
	idx := make([]int, 0, len(byLevel))
	for i := range byLevel {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return values[idx[a]] < values[idx[b]] })

	out := Summary{Model: in.Model, SLO: in.SLO, FirstFail: -1, LastPass: -1}
	for _, li := range idx {
		out.Levels = append(out.Levels, buildLevel(li, values[li], byLevel[li], in.SLO))
	}
	if in.SLO != nil {
		for i, l := range out.Levels {
			if !l.SLO.Pass {
				out.FirstFail = i
				break
			}
			out.LastPass = i
		}
	}
	return out
}

func summarizeRun(rd RunData, slo *SLO) perRun {
	r := rd.Run
	pr := perRun{
		throughput: r.Summary.Throughput, late: float64(r.Summary.Late), dropped: float64(r.Summary.Dropped),
		errors: float64(r.Summary.Errors), limited: r.Summary.ClientLimited, note: r.Summary.ClientNote,
		hists: rd.Latencies, resources: rd.Resources,
	}
	if pr.hists == nil {
		pr.hists = map[string]*Latencies{}
	}
	pr.serverMean = serverMeans(rd.Server)
	if slo != nil {
		key := slo.Op
		if key == "" {
			key = "all"
		}
		offeredSLO := rd.Offered[key]
		if h := pr.hists[key]; h != nil && offeredSLO > 0 {
			pr.within = float64(h.CountAtMost(slo.Threshold.Microseconds())) / float64(offeredSLO)
			pr.sloValue = float64(h.ValueAtQuantile(slo.Percentile))
		} else if offeredSLO > 0 {
			pr.within = 0
			pr.sloValue = math.NaN()
		} else {
			pr.within = math.NaN()
			pr.sloValue = math.NaN()
		}
	}
	return pr
}

// serverMeans is the mean server execution time per statement of each op
// over a run's measured window, in µs.
func serverMeans(xs []store.ServerInterval) map[string]float64 {
	if len(xs) == 0 {
		return nil
	}
	calls := map[string]int64{}
	exec := map[string]float64{}
	for _, x := range xs {
		for _, k := range []string{x.Op, "all"} {
			calls[k] += x.Calls
			exec[k] += float64(x.Exec) / 1e3
		}
	}
	out := map[string]float64{}
	for k, n := range calls {
		if n > 0 {
			out[k] = exec[k] / float64(n)
		}
	}
	return out
}

// countAtMost counts recorded values no greater than limit (µs). A bucket
// counts only when its highest equivalent value is within the limit, so the
// histogram's 3-digit precision can never make an SLO look met when it is not.
func countAtMost(h *hdrhistogram.Histogram, limit int64) int64 {
	// Max is the top of the highest bucket: when it is within the limit,
	// every value is, and the walk over every bucket is not needed.
	if h.Max() <= limit {
		return h.TotalCount()
	}
	var n int64
	for _, b := range h.Distribution() {
		if b.Count > 0 && b.To <= limit {
			n += b.Count
		}
	}
	return n
}

func buildLevel(li int, value float64, runs []perRun, slo *SLO) Level {
	l := Level{Index: li, Level: value, Reps: len(runs)}
	col := func(f func(perRun) float64) stats.Estimate {
		xs := make([]float64, 0, len(runs))
		for _, r := range runs {
			if v := f(r); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		return stats.Summarize(xs)
	}
	l.Throughput = col(func(r perRun) float64 { return r.throughput })
	l.Late = col(func(r perRun) float64 { return r.late })
	l.Dropped = col(func(r perRun) float64 { return r.dropped })
	l.Errors = col(func(r perRun) float64 { return r.errors })
	seen := map[string]bool{}
	for _, r := range runs {
		if r.limited {
			l.ClientLimited++
		}
		if r.note != "" && !seen[r.note] {
			seen[r.note] = true
			l.Notes = append(l.Notes, r.note)
		}
	}
	ops := map[string]bool{}
	for _, r := range runs {
		for op := range r.hists {
			ops[op] = true
		}
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		if op != "all" {
			names = append(names, op)
		}
	}
	sort.Strings(names)
	if len(names) > 1 {
		names = append(names, "all")
	}
	for _, op := range names {
		h := func(q float64) func(perRun) float64 {
			return func(r perRun) float64 {
				hh := r.hists[op]
				if hh == nil || hh.TotalCount() == 0 {
					return math.NaN()
				}
				switch q {
				case -1:
					return hh.Mean()
				case 100:
					return float64(hh.Max())
				}
				return float64(hh.ValueAtQuantile(q))
			}
		}
		server := func(r perRun) float64 {
			if op == "all" {
				// The client's "all" covers every op; the server's must
				// too, or the difference mixes different requests.
				for o := range r.hists {
					if _, ok := r.serverMean[o]; !ok && o != "all" {
						return math.NaN()
					}
				}
			}
			if v, ok := r.serverMean[op]; ok {
				return v
			}
			return math.NaN()
		}
		network := func(r perRun) float64 {
			sv, hh := server(r), r.hists[op]
			if math.IsNaN(sv) || hh == nil || hh.TotalCount() == 0 {
				return math.NaN()
			}
			return hh.Mean() - sv
		}
		l.Ops = append(l.Ops, OpRow{
			Server: col(server), Network: col(network),
			Op: op,
			Count: col(func(r perRun) float64 {
				if hh := r.hists[op]; hh != nil {
					return float64(hh.TotalCount())
				}
				return 0
			}),
			Latency: Latency{Mean: col(h(-1)), P50: col(h(50)), P95: col(h(95)), P99: col(h(99)), Max: col(h(100))},
		})
	}
	l.Hosts = hostRows(runs)
	if slo != nil {
		res := &SLOResult{Within: col(func(r perRun) float64 { return r.within }), Value: col(func(r perRun) float64 { return r.sloValue })}
		res.Pass = res.Within.N > 0 && res.Within.Mean >= slo.Percentile/100
		l.SLO = res
	}
	return l
}

func hostRows(runs []perRun) []HostRow {
	type acc struct {
		row        HostRow
		cpu, net   float64
		nCPU, nNet int
		diskSum    map[string]float64
		diskMax    map[string]float64
		diskN      map[string]int
	}
	byHost := map[string]*acc{}
	var names []string
	for _, r := range runs {
		for _, h := range r.resources {
			a := byHost[h.Host]
			if a == nil {
				a = &acc{row: HostRow{Host: h.Host}, diskSum: map[string]float64{}, diskMax: map[string]float64{}, diskN: map[string]int{}}
				byHost[h.Host] = a
				names = append(names, h.Host)
			}
			// A run without CPU or network samples says nothing about
			// them; it must not pull the mean towards zero.
			if h.CPUSamples > 0 {
				a.nCPU++
				a.cpu += h.CPUMean
				a.row.CPUMax = max(a.row.CPUMax, h.CPUMax)
			}
			if h.NetSamples > 0 {
				a.nNet++
				a.net += h.NetBytes
			}
			if h.Disk != "" {
				a.diskSum[h.Disk] += h.DiskUtil
				a.diskN[h.Disk]++
				a.diskMax[h.Disk] = max(a.diskMax[h.Disk], h.DiskUtilMax)
			}
		}
	}
	sort.Strings(names)
	out := make([]HostRow, 0, len(names))
	for _, name := range names {
		a := byHost[name]
		a.row.CPUMean, a.row.NetBytes = math.NaN(), math.NaN()
		if a.nCPU > 0 {
			a.row.CPUMean = a.cpu / float64(a.nCPU)
		}
		if a.nNet > 0 {
			a.row.NetBytes = a.net / float64(a.nNet)
		}
		disks := make([]string, 0, len(a.diskSum))
		for d := range a.diskSum {
			disks = append(disks, d)
		}
		sort.Strings(disks)
		for _, d := range disks {
			if mean := a.diskSum[d] / float64(a.diskN[d]); a.row.Disk == "" || mean > a.row.DiskUtil {
				a.row.Disk, a.row.DiskUtil, a.row.DiskUtilMax = d, mean, a.diskMax[d]
			}
		}
		out = append(out, a.row)
	}
	return out
}

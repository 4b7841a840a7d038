// Package eslbuild reads the benchmark runs of an empirical ESL model
// (seed-digest §4, docs/esl.md) from the results of a disk-target
// campaign: each treatment (or the campaign) is one op size
// (target.block_size) and read/write mix, and the per-second samples of
// every completed run's measured phase form the distributions esl.Build
// pools.
package eslbuild

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/results"
)

// The operation names of the YCSB workload (docs/spec.md) the read share
// counts.
const (
	opRead            = "read"
	opUpdate          = "update"
	opInsert          = "insert"
	opScan            = "scan"
	opReadModifyWrite = "read_modify_write"
	opRMWSchema1      = "readmodifywrite" // as schema-1 stores name the preset's
)

// FromResults turns every completed run of a disk-target campaign into an
// esl.BenchmarkRun: its op size and read share from its treatment, its
// per-second samples from its measured intervals (the disk target's own
// throughput; bandwidth is ops/s x block size), or, with volume
// HOST/RESOURCE, from the samples of that monitored volume.
func FromResults(r *results.Results, volume string) ([]esl.BenchmarkRun, error) {
	var vhost, vres string
	if volume != "" {
		var src string
		var err error
		if vhost, vres, src, err = slp.ParseSeries(volume); err != nil {
			return nil, fmt.Errorf("--volume: %v", err)
		}
		if src != "" {
			return nil, fmt.Errorf("--volume %q: leave out @%s; the campaign's own samples are used", volume, src)
		}
	}
	if r.Campaign().SpecYAML == "" {
		return nil, fmt.Errorf("%s holds no campaign spec (imported data); build the model from the results of a disk-target campaign", r.Path())
	}
	var out []esl.BenchmarkRun
	for _, t := range r.Treatments() {
		for _, run := range r.CompletedRuns(t.Name) {
			b, err := benchmarkRun(r, t, run, vhost, vres)
			if err != nil {
				return nil, err
			}
			if len(b.OpsPerS) > 0 {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no completed run with measured intervals; run the benchmark campaign first", r.Path())
	}
	return out, nil
}

func benchmarkRun(r *results.Results, t results.Treatment, run results.Run, vhost, vres string) (esl.BenchmarkRun, error) {
	where := "the campaign"
	if t.Name != "" {
		where = "treatment " + t.Name
	}
	if t.Target.Type == "" {
		return esl.BenchmarkRun{}, fmt.Errorf("run %d belongs to treatment %q, which the results hold no facts of", run.ID, t.Name)
	}
	if t.Target.Type != "disk" {
		return esl.BenchmarkRun{}, fmt.Errorf("%s uses the %s target; an empirical ESL is built from the disk target (docs/targets.md)", where, t.Target.Type)
	}
	bs, _ := r.TargetSetting(t.Name, "block_size")
	block, err := ParseBlockSize(bs)
	if err != nil {
		return esl.BenchmarkRun{}, fmt.Errorf("%s: target.block_size: %w", where, err)
	}
	readPct, rmw, err := ReadShare(t.Workload.Mix)
	if err != nil {
		return esl.BenchmarkRun{}, fmt.Errorf("%s: %w", where, err)
	}
	b := esl.BenchmarkRun{OpSizeKiB: float64(block) / 1024, ReadPct: readPct}
	if vhost != "" {
		b.OpsPerS, b.BytesPerS, err = volumeSamples(r, run, vhost, vres)
	} else {
		b.OpsPerS, err = intervalRates(r, run, rmw)
		for _, o := range b.OpsPerS {
			b.BytesPerS = append(b.BytesPerS, o*float64(block))
		}
	}
	if err != nil {
		return esl.BenchmarkRun{}, fmt.Errorf("run %d (%s): %w", run.ID, where, err)
	}
	return b, nil
}

// ParseBlockSize reads the disk target's block_size ("4KiB", "1MiB",
// "4096"); the target checked it when the campaign ran. Empty is the
// target's default, 4 KiB.
func ParseBlockSize(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return 4 << 10, nil
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	mul := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}[strings.TrimSpace(v[i:])]
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil || mul == 0 || n <= 0 {
		return 0, fmt.Errorf("%q is not a block size like 4KiB", s)
	}
	return n * mul, nil
}

// ReadShare is the read percentage of an operation mix (reads over reads
// and writes; read_modify_write is one of each), rounded to 0.1% so that
// a mix of 3:1 is labelled R75 exactly, and whether the mix has
// read_modify_write operations (two I/Os each).
func ReadShare(mix map[string]float64) (float64, bool, error) {
	if len(mix) == 0 {
		return 0, false, fmt.Errorf("the workload's operation mix is unknown")
	}
	var reads, writes, rmw float64
	for op, w := range mix {
		switch op {
		case opRead:
			reads += w
		case opUpdate, opInsert:
			writes += w
		case opReadModifyWrite, opRMWSchema1:
			rmw += w
		case opScan:
			if w > 0 {
				return 0, false, fmt.Errorf("the workload has scans; an ESL benchmark issues single reads and writes (workload.operations: {read: 1} or {update: 1})")
			}
		default:
			if w > 0 {
				return 0, false, fmt.Errorf("workload.operations: unknown operation %q", op)
			}
		}
	}
	reads, writes = reads+rmw, writes+rmw
	if reads+writes <= 0 {
		return 0, false, fmt.Errorf("the workload has no reads or writes")
	}
	return math.Round(1000*reads/(reads+writes)) / 10, rmw > 0, nil
}

// intervalRates are the run's operations per second in each measured
// interval, all operation types together (read_modify_write counts two
// I/Os). A short last interval (less than half the others) is left out.
func intervalRates(r *results.Results, run results.Run, rmw bool) ([]float64, error) {
	ivs, err := r.Intervals(run.ID, "measure")
	if err != nil {
		return nil, err
	}
	type acc struct {
		count float64
		dur   time.Duration
	}
	by := map[int64]*acc{}
	var starts []int64
	var longest time.Duration
	for _, iv := range ivs {
		k := iv.Start.UnixNano()
		a := by[k]
		if a == nil {
			a = &acc{dur: iv.Duration}
			by[k] = a
			starts = append(starts, k)
		}
		n := float64(iv.Count)
		if rmw && iv.Op == opReadModifyWrite {
			n *= 2
		}
		a.count += n
		longest = max(longest, iv.Duration)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	var out []float64
	for _, k := range starts {
		a := by[k]
		if a.dur <= 0 || a.dur < longest/2 {
			continue
		}
		out = append(out, a.count/a.dur.Seconds())
	}
	return out, nil
}

// volumeSamples are a monitored volume's ops and bytes per second over
// the run's measured phase.
func volumeSamples(r *results.Results, run results.Run, host, resource string) ([]float64, []float64, error) {
	xs, err := r.Samples(results.SampleFilter{RunID: -1, Host: host, Resource: resource, From: run.Summary.MeasureStart, To: run.Summary.MeasureEnd})
	if err != nil {
		return nil, nil, err
	}
	keep := xs[:0]
	for _, x := range xs {
		if !x.Start.Add(x.Period).After(run.Summary.MeasureEnd) {
			keep = append(keep, x)
		}
	}
	if len(keep) == 0 {
		return nil, nil, fmt.Errorf("no samples of %s/%s in its measured phase; check --volume against headroom export -t samples", host, resource)
	}
	obs, err := slp.VolumeObservations(keep)
	if err != nil {
		return nil, nil, err
	}
	var ops, bytes []float64
	for _, o := range obs {
		ops, bytes = append(ops, o.Ops), append(bytes, o.Bytes)
	}
	return ops, bytes, nil
}

package variability

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/analysis/stats"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// source is whose CPU theta is: a host, less the load generator's process
// when that host also ran the generator; host "" when theta is unknown.
type source struct {
	host       string
	lessClient bool
	cpus       int    // the generator host's CPU count, with lessClient
	note       string // why theta is unknown or how it is computed
}

// thetaSource resolves whose CPU is theta for one treatment. Theta is the
// CPU of the target's host (seed-digest §2: seed 001 sampled the server's
// VM), never the load generator's: a host named in the settings (or the
// lab host the managed server ran on, which ConfigOf fills in) is used as
// it is; otherwise the one sampled host other than the generator's
// machine. When only the generator's machine was sampled, the target ran
// beside it: theta is that machine's CPU less the generator process's
// share, unless the target ran inside the generator's own process, whose
// CPU cannot be split.
func thetaSource(name string, runs []levels.RunData, in Input, cfg Config) (source, error) {
	gen := in.Generator
	host := cfg.Hosts[name]
	if host == "" {
		host = cfg.Host
	}
	if host == "" {
		var hosts []string
		generatorSampled := false
		for _, h := range sampledHosts(runs, in.Samples) {
			if gen.Host != "" && h == gen.Host {
				generatorSampled = true
				continue
			}
			hosts = append(hosts, h)
		}
		switch {
		case len(hosts) > 1:
			// Theta is one server's CPU (seed-digest §2): with several
			// (a cluster, an n-tier), the user names the one to judge.
			return source{}, fmt.Errorf("variability: treatment %q has CPU samples from hosts %s, and theta is the CPU of one server's host; name it in the spec with analysis.variability.host (or analysis.variability.hosts: {%s: HOST})",
				name, strings.Join(hosts, ", "), name)
		case len(hosts) == 1:
			host = hosts[0]
		case generatorSampled:
			host = gen.Host
		default:
			return source{note: "no CPU utilisation was sampled during these runs; theta is unknown"}, nil
		}
	}
	if gen.Host == "" || host != gen.Host {
		return source{host: host}, nil
	}
	if in.InProcess[name] {
		return source{note: fmt.Sprintf("the target ran inside the load generator's own process on %s, so its CPU cannot be told apart from the generator's; theta is unknown", host)}, nil
	}
	if gen.CPUs <= 0 {
		return source{note: fmt.Sprintf("%s also ran the load generator, and its CPU count is not recorded, so the generator's share cannot be taken out; theta is unknown", host)}, nil
	}
	return source{host: host, lessClient: true, cpus: gen.CPUs,
		note: fmt.Sprintf("%s also ran the load generator: theta is its CPU less the generator process's share (the run's client CPU over %d CPUs, averaged over the whole measured phase)", host, gen.CPUs)}, nil
}

// sampledHosts are the hosts with whole-host CPU samples during runs, sorted.
func sampledHosts(runs []levels.RunData, samples map[int64][]monitor.Sample) []string {
	seen := map[string]bool{}
	for _, rd := range runs {
		for _, s := range samples[rd.Run.ID] {
			if isCPU(s) {
				seen[s.Host] = true
			}
		}
	}
	hosts := make([]string, 0, len(seen))
	for h := range seen {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	return hosts
}

func isCPU(s monitor.Sample) bool {
	return s.Resource == monitor.ResourceCPU && s.Metric == monitor.CPUUtilPct
}

// theta is the per-run mean CPU of the source host over the trimmed
// measured window (seed-digest §2: samples from t+30 s to t+(d-30) s),
// less the load generator's share when the host ran it too, summarised
// across the level's runs. A run whose trimmed window is empty or holds
// no sample falls back to its whole measured window, with a note.
func theta(runs []levels.RunData, samples map[int64][]monitor.Sample, src source, cfg Config) (stats.Estimate, []string) {
	host := src.host
	if host == "" {
		return stats.Summarize(nil), nil
	}
	var per []float64
	var short, empty, missing int
	for _, rd := range runs {
		from, to := rd.Run.Summary.MeasureStart, rd.Run.Summary.MeasureEnd
		if from.IsZero() || !to.After(from) {
			missing++
			continue
		}
		xs := samples[rd.Run.ID]
		a, b := from.Add(cfg.TrimStart), to.Add(-cfg.TrimEnd)
		m, n := meanCPU(xs, host, a, b)
		if n == 0 {
			if m, n = meanCPU(xs, host, from, to); n == 0 {
				missing++
				continue
			}
			if !b.After(a) {
				short++
			} else {
				empty++
			}
		}
		if src.lessClient {
			// ClientCPU is % of one core; the host's utilisation is % of
			// all its CPUs.
			m = math.Max(0, m-rd.Run.Summary.ClientCPU/float64(src.cpus))
		}
		per = append(per, m)
	}
	var notes []string
	if short > 0 {
		notes = append(notes, fmt.Sprintf("theta of %d run(s) uses the whole measured window: it is not longer than the trims (%v + %v)", short, cfg.TrimStart, cfg.TrimEnd))
	}
	if empty > 0 {
		notes = append(notes, fmt.Sprintf("theta of %d run(s) uses the whole measured window: no CPU sample of %s fell inside the trimmed window", empty, host))
	}
	if missing > 0 {
		notes = append(notes, fmt.Sprintf("%d run(s) have no CPU sample of %s in their measured window", missing, host))
	}
	return stats.Summarize(per), notes
}

// meanCPU is the mean whole-host CPU utilisation of host over samples
// starting in [from, to), and their count.
func meanCPU(xs []monitor.Sample, host string, from, to time.Time) (float64, int) {
	var sum float64
	var n int
	for _, s := range xs {
		if s.Host == host && isCPU(s) && !s.Start.Before(from) && s.Start.Before(to) {
			sum += s.Value
			n++
		}
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return sum / float64(n), n
}

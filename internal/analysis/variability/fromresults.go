package variability

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/headroom-dev/headroom/internal/analysis/levels"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// Study is the variation analysis of a campaign with what its settings
// left out.
type Study struct {
	Result Result
	// Notes say which settings were left out: treatments that
	// analysis.variability names but that have no completed runs.
	Notes []string
	// Problem is why the analysis could not run with these settings or on
	// these runs (a host without samples, say); nil when it ran.
	Problem error
}

// FromResults runs the analysis on the completed runs of a campaign with
// its analysis.variability settings (ConfigOf). It returns nil when no run
// completed; the error is a failure to read the results.
func FromResults(r *results.Results) (*Study, error) {
	in, err := ReadInput(r)
	if err != nil || len(in.Runs) == 0 {
		return nil, err
	}
	withRuns := map[string]bool{}
	for _, rd := range in.Runs {
		withRuns[rd.Run.Treatment] = true
	}
	cfg, notes := ConfigOf(r.Treatments(), withRuns)
	s := &Study{Notes: notes}
	s.Result, s.Problem = Analyze(in, cfg)
	return s, nil
}

// ReadInput reads the completed runs of every treatment
// (levels.FromResults: the last completed run of every plan slot, with its
// measured-phase intervals) and their whole-host CPU utilisation samples.
func ReadInput(r *results.Results) (Input, error) {
	in := Input{Samples: map[int64][]monitor.Sample{}, Generator: generatorOf(r.Campaign().HostJSON), InProcess: map[string]bool{}}
	for _, t := range r.Treatments() {
		in.InProcess[t.Name] = t.Target.InProcess
		lin, _, err := levels.FromResults(r, t.Name)
		if err != nil {
			return Input{}, err
		}
		for _, rd := range lin.Runs {
			xs, err := r.Samples(results.SampleFilter{RunID: rd.Run.ID, Resource: monitor.ResourceCPU, Metric: monitor.CPUUtilPct})
			if err != nil {
				return Input{}, err
			}
			in.Runs = append(in.Runs, rd)
			in.Samples[rd.Run.ID] = xs
		}
	}
	return in, nil
}

// generatorOf reads the load generator's machine from the host facts the
// campaign stored (hostinfo.Facts: hostname and cpus); unknown fields stay
// empty, as for imported data.
func generatorOf(hostJSON string) Generator {
	var f struct {
		Hostname string `json:"hostname"`
		CPUs     int    `json:"cpus"`
	}
	if hostJSON == "" || json.Unmarshal([]byte(hostJSON), &f) != nil {
		return Generator{}
	}
	return Generator{Host: f.Hostname, CPUs: f.CPUs}
}

// ConfigOf turns a campaign's analysis.variability settings into the
// analysis's configuration, restricted to the treatments with completed
// runs (withRuns); the notes say what was left out. The settings are the
// campaign's: every treatment carries them, and the first one's count.
// Unset thresholds stay zero, so that Analyze applies its defaults
// (relative: repeat_pct 5, cross_pct 20, alpha 0.05; absolute, when
// thresholds: absolute or repeat_se / cross_diff is written: seed 001's
// 5 ms and 30 ms; trim 30 s). Without a host setting, a
// treatment whose managed server runs on one lab host has theta from that
// host's CPU; without policies, treatments that reset differently are
// compared by their reset.
func ConfigOf(ts []results.Treatment, withRuns map[string]bool) (Config, []string) {
	var v results.Variability
	if len(ts) > 0 {
		v = ts[0].Analysis.Variability
	}
	cfg := Config{Thresholds: v.Thresholds, RepeatPct: v.RepeatPct, CrossPct: v.CrossPct, Alpha: v.Alpha,
		RepeatSE: v.RepeatSE.D(), CrossDiff: v.CrossDiff.D(), Host: v.Host, Hosts: map[string]string{}}
	if v.Trim != nil {
		if v.Trim.D() == 0 {
			cfg.NoTrim = true
		} else {
			cfg.TrimStart, cfg.TrimEnd = v.Trim.D(), v.Trim.D()
		}
	}
	for k, h := range v.Hosts {
		cfg.Hosts[k] = h
	}
	if v.Host == "" {
		for _, t := range ts {
			if hs := t.Target.Hosts; len(hs) == 1 && cfg.Hosts[t.Name] == "" {
				cfg.Hosts[t.Name] = hs[0]
			}
		}
	}
	var notes []string
	keep := func(names []string, field string) []string {
		var out []string
		for _, n := range names {
			if withRuns[n] {
				out = append(out, n)
			} else {
				notes = append(notes, fmt.Sprintf("analysis.variability.%s names %s, which has no completed runs; it is left out", field, settingLabel(n)))
			}
		}
		return out
	}
	for _, g := range v.Equal {
		if kept := keep(g, "equal"); len(kept) > 0 {
			cfg.Groups = append(cfg.Groups, kept)
		}
	}
	if len(v.Equal) > 0 {
		// Instances in no group are still judged on their own.
		in := map[string]bool{}
		for _, g := range cfg.Groups {
			for _, n := range g {
				in[n] = true
			}
		}
		for _, t := range ts {
			if withRuns[t.Name] && !in[t.Name] {
				cfg.Groups = append(cfg.Groups, []string{t.Name})
			}
		}
	}
	if pol := policiesOf(v, ts); pol != nil {
		names := make([]string, 0, len(pol))
		for n := range pol {
			names = append(names, n)
		}
		sort.Strings(names)
		cfg.Policies = map[string]string{}
		for _, n := range keep(names, "policies") {
			cfg.Policies[n] = pol[n]
		}
		if len(cfg.Policies) < 2 {
			cfg.Policies = nil // one policy compares with nothing
		}
	}
	return cfg, notes
}

// policiesOf is the reset-policy label of every treatment: the policies:
// setting when given, else each treatment's reset when the treatments do
// not all reset the same way, else nil (nothing to compare). Treatments
// only the runs know (no recorded reset) take no part.
func policiesOf(v results.Variability, ts []results.Treatment) map[string]string {
	if len(v.Policies) > 0 {
		return v.Policies
	}
	out := map[string]string{}
	var first string
	differ := false
	for _, t := range ts {
		if t.Reset == "" {
			continue
		}
		if len(out) == 0 {
			first = t.Reset
		}
		out[t.Name] = t.Reset
		differ = differ || t.Reset != first
	}
	if !differ {
		return nil
	}
	return out
}

// settingLabel names a treatment in a note on the settings.
func settingLabel(name string) string {
	if name == "" {
		return "the campaign"
	}
	return name
}

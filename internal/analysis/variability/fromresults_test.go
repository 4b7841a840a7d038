package variability

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
)

// The campaign's settings become the analysis's configuration: thresholds
// as written (zero left for Analyze's defaults), trim 0s as no trim, a
// managed server's single lab host as theta's host, equal groups without
// the treatments that have no runs (noted), the others on their own, and
// policies from the treatments' resets when they differ.
func TestConfigOf(t *testing.T) {
	zero := results.Dur(0)
	v := results.Variability{RepeatSE: results.Dur(4 * time.Millisecond), Trim: &zero,
		Hosts: map[string]string{"b": "db9"}, Equal: [][]string{{"a", "b", "gone"}}}
	tr := func(name, reset string, hosts ...string) results.Treatment {
		t := results.Treatment{Name: name, Reset: reset, Analysis: results.Analysis{Variability: v}}
		t.Target.Hosts = hosts
		return t
	}
	ts := []results.Treatment{tr("a", "none", "db1"), tr("b", "none", "db2"), tr("c", "restore", "db3"), tr("gone", "none"), tr("two", "none", "x", "y")}
	withRuns := map[string]bool{"a": true, "b": true, "c": true, "two": true}
	cfg, notes := ConfigOf(ts, withRuns)
	if cfg.RepeatSE != 4*time.Millisecond || cfg.CrossDiff != 0 || !cfg.NoTrim || cfg.Host != "" {
		t.Errorf("thresholds %+v", cfg)
	}
	if want := map[string]string{"a": "db1", "b": "db9", "c": "db3"}; !reflect.DeepEqual(cfg.Hosts, want) {
		t.Errorf("hosts %v, want %v (the setting wins; two hosts leave the choice to the samples)", cfg.Hosts, want)
	}
	if want := [][]string{{"a", "b"}, {"c"}, {"two"}}; !reflect.DeepEqual(cfg.Groups, want) {
		t.Errorf("groups %v, want %v", cfg.Groups, want)
	}
	if want := map[string]string{"a": "none", "b": "none", "c": "restore", "two": "none"}; !reflect.DeepEqual(cfg.Policies, want) {
		t.Errorf("policies %v, want %v", cfg.Policies, want)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "analysis.variability.equal names gone") || !strings.Contains(notes[1], "analysis.variability.policies names gone") {
		t.Errorf("notes %q", notes)
	}

	// One reset for all, no settings: defaults, no groups, no policies;
	// the trim unset is Analyze's 30 s.
	cfg, notes = ConfigOf([]results.Treatment{{Name: "", Reset: "none"}}, map[string]bool{"": true})
	if cfg.NoTrim || cfg.TrimStart != 0 || cfg.Groups != nil || cfg.Policies != nil || len(notes) != 0 {
		t.Errorf("plain campaign: %+v %q", cfg, notes)
	}
	if d, err := cfg.withDefaults(); err != nil || d.RepeatSE != DefaultRepeatSE || d.CrossDiff != DefaultCrossDiff || d.TrimStart != DefaultTrim {
		t.Errorf("defaults %+v %v", d, err)
	}
}

// The v1 treatments store (two sqlite treatments, 2 levels x 2
// repetitions): one instance per treatment, each its own group, with the
// default thresholds.
func TestFromResultsV1(t *testing.T) {
	s, err := FromResults(resultstest.OpenV1(t, "treatments.db"))
	if err != nil || s == nil || s.Problem != nil {
		t.Fatalf("study %+v, %v", s, err)
	}
	res := s.Result
	if res.Config.RepeatSE != DefaultRepeatSE || res.Config.CrossDiff != DefaultCrossDiff || res.Config.TrimStart != DefaultTrim {
		t.Errorf("config %+v", res.Config)
	}
	if len(res.Instances) != 2 || len(res.Groups) != 2 || len(res.Policies) != 0 {
		t.Fatalf("%d instances, %d groups, %d policies", len(res.Instances), len(res.Groups), len(res.Policies))
	}
	for _, x := range res.Instances {
		if len(x.Levels) != 2 || x.Levels[0].Reps != 2 || x.Levels[0].Tau.N != 2 {
			t.Errorf("instance %s: %+v", x.Name, x.Levels)
		}
	}
}

// The relative settings pass through as written; the generator's machine
// comes from the campaign's host facts.
func TestConfigOfRelativeAndGenerator(t *testing.T) {
	v := results.Variability{Thresholds: "relative", RepeatPct: 3, CrossPct: 15, Alpha: 0.01}
	cfg, _ := ConfigOf([]results.Treatment{{Name: "a", Analysis: results.Analysis{Variability: v}}}, map[string]bool{"a": true})
	if cfg.Thresholds != Relative || cfg.RepeatPct != 3 || cfg.CrossPct != 15 || cfg.Alpha != 0.01 {
		t.Errorf("relative settings %+v", cfg)
	}
	if g := generatorOf(`{"hostname":"box","cpus":8,"os":"linux"}`); g != (Generator{Host: "box", CPUs: 8}) {
		t.Errorf("generator %+v", g)
	}
	if g := generatorOf("not json"); g != (Generator{}) {
		t.Errorf("unreadable host facts: %+v, want none", g)
	}
}

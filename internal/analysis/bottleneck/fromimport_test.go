package bottleneck

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/importgen"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/importer"
)

var importT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// parseScenario imports the scenario's files of one format, as headroom
// import parses them.
func parseScenario(t *testing.T, s *importgen.Scenario, f importer.Format) []monitor.Sample {
	t.Helper()
	var out []monitor.Sample
	for _, h := range s.Hosts {
		var data []byte
		switch f {
		case importer.FormatSar:
			data = s.Sar(h)
		case importer.FormatIostat:
			data = s.Iostat(h)
		case importer.FormatPrometheus:
			data = s.NodeExporter(h)
		}
		ss, err := importer.Parse(f, h+"."+string(f), data, importer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ss...)
	}
	return out
}

// checkClasses compares each window's classes with the scenario's design.
func checkClasses(t *testing.T, s *importgen.Scenario, a *Imported, first int) {
	t.Helper()
	for i, w := range a.Windows {
		if w.Err != "" {
			t.Fatalf("window %d: %s", i, w.Err)
		}
		want := s.Expected(first + i)
		got := map[string]string{}
		for _, rs := range w.Result.Resources {
			c := string(rs.Class)
			if c == "" {
				c = importgen.None
			}
			got[rs.Resource] = c
			if rs.Intervals != s.Seconds {
				t.Errorf("window %d: %s observed in %d intervals, want %d", i, rs.Resource, rs.Intervals, s.Seconds)
			}
		}
		for id, c := range want {
			if got[id] != c {
				t.Errorf("window %d (%s): %s is %q, want %q (%s)", first+i, s.Windows[first+i].Class, id, got[id], c, w.Result.Finding)
			}
		}
	}
}

func TestClassifyImportedFormats(t *testing.T) {
	s := importgen.FiveClasses(importT0, 60, 7)
	for _, f := range []importer.Format{importer.FormatSar, importer.FormatIostat, importer.FormatPrometheus} {
		t.Run(string(f), func(t *testing.T) {
			a, err := ClassifyImported(parseScenario(t, s, f), ImportedOptions{Window: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if a.Config.Lambda != time.Second || len(a.Windows) != len(s.Windows) || strings.Join(a.Sources, ",") != string(f) ||
				strings.Join(a.Hosts, ",") != "db1,db2,db3" || !a.Span.From.Equal(importT0) {
				t.Fatalf("lambda %v, %d windows, sources %v, hosts %v, span %v", a.Config.Lambda, len(a.Windows), a.Sources, a.Hosts, a.Span)
			}
			checkClasses(t, s, a, 0)
			// The whole span at once holds every design: db2/cpu and
			// db3/disk:vda are saturated in the simultaneous fifth of it.
			whole, err := ClassifyImported(parseScenario(t, s, f), ImportedOptions{})
			if err != nil || len(whole.Windows) != 1 || whole.Windows[0].Result.Intervals != s.Total() {
				t.Fatalf("whole span: %v %+v", err, whole)
			}
		})
	}
}

func TestClassifyImportedBounds(t *testing.T) {
	s := importgen.FiveClasses(importT0, 60, 3)
	samples := parseScenario(t, s, importer.FormatSar)
	ref := func(v string) TimeRef {
		r, err := ParseTimeRef(v)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Relative and absolute bounds pick the same windows.
	for _, opt := range []ImportedOptions{
		{From: ref("+1m"), To: ref("3m"), Window: time.Minute},
		{From: ref("2026-03-01T12:01:00Z"), To: ref("2026-03-01T12:03:00Z"), Window: time.Minute},
	} {
		a, err := ClassifyImported(samples, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Windows) != 2 || !a.Windows[0].Window.From.Equal(importT0.Add(time.Minute)) {
			t.Fatalf("%+v: windows %+v", opt, a.Windows)
		}
		checkClasses(t, s, a, 1)
	}
	// A last window shorter than the others is classified over what it
	// holds; the single design's first 30 s are still single.
	a, err := ClassifyImported(samples, ImportedOptions{To: ref("+90s"), Window: time.Minute})
	if err != nil || len(a.Windows) != 2 || a.Windows[1].Result.Intervals != 30 {
		t.Fatalf("%v %+v", err, a)
	}
	if !strings.HasPrefix(a.Windows[0].Result.Finding, "single bottleneck: db1/cpu, critically saturated in 50% of 1s intervals") {
		t.Fatalf("finding: %s", a.Windows[0].Result.Finding)
	}
	// Hosts restrict the resources: without db1, the single window has
	// no bottleneck.
	a, err = ClassifyImported(samples, ImportedOptions{Config: Config{Hosts: []string{"db2", "db3"}}, To: ref("1m")})
	if err != nil || len(a.Windows) != 1 || !strings.HasPrefix(a.Windows[0].Result.Finding, "no bottleneck:") || strings.Join(a.Hosts, ",") != "db2,db3" {
		t.Fatalf("%v %+v", err, a)
	}
	for _, c := range []struct {
		opt  ImportedOptions
		want string
	}{
		{ImportedOptions{From: ref("+10m")}, "holds no imported data, which runs from 2026-03-01T12:00:00Z to 2026-03-01T12:05:00Z"},
		{ImportedOptions{From: ref("+2m"), To: ref("+1m")}, "is empty"},
		{ImportedOptions{Window: 500 * time.Millisecond}, "window 500ms is shorter than one interval of 1s"},
		{ImportedOptions{Config: Config{Hosts: []string{"web1"}}}, "no imported CPU or disk utilisation (util_pct of cpu, disk: or volume:) of hosts web1"},
	} {
		if _, err := ClassifyImported(samples, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
	if _, err := ParseTimeRef("yesterday"); err == nil || !strings.Contains(err.Error(), "neither an RFC 3339 time") {
		t.Fatalf("bad time: %v", err)
	}
}

// Several tools describing one resource: the finer one is used, and the
// note says so; a sample spanning a gap (a missed scrape) is left out
// rather than failing the analysis; samples of the campaign's own sampler
// are not imported data.
func TestClassifyImportedMixedSources(t *testing.T) {
	s := importgen.FiveClasses(importT0, 12, 5)
	sar := parseScenario(t, s, importer.FormatSar)
	prom := parseScenario(t, s, importer.FormatPrometheus)
	// Coarsen node_exporter to 2 s by dropping every other scrape's
	// samples and doubling the others' periods.
	var coarse []monitor.Sample
	for _, x := range prom {
		if x.Start.Sub(importT0)/time.Second%2 == 0 {
			x.Period = 2 * time.Second
			coarse = append(coarse, x)
		}
	}
	own := monitor.Sample{Host: "db1", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: importT0, Period: time.Second, Value: 100, Source: monitor.SourceSampled}
	a, err := ClassifyImported(append(append([]monitor.Sample{own}, coarse...), sar...), ImportedOptions{Window: 12 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.Sources, ",") != "sar" || a.Config.Lambda != time.Second {
		t.Fatalf("sources %v, lambda %v", a.Sources, a.Config.Lambda)
	}
	notes := strings.Join(a.Notes, "\n")
	if !strings.Contains(notes, "db1/cpu is described by prometheus and sar; the sar samples (every 1s) are used") {
		t.Fatalf("notes:\n%s", notes)
	}
	checkClasses(t, s, a, 0)

	// Only the coarse data, with a gap: lambda follows its period, and the
	// sample over the gap is left out with a note.
	var gap []monitor.Sample
	for _, x := range coarse {
		switch d := x.Start.Sub(importT0); {
		case d == 4*time.Second:
			x.Period = 4 * time.Second
		case d == 6*time.Second:
			continue
		}
		gap = append(gap, x)
	}
	a, err = ClassifyImported(gap, ImportedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Lambda != 2*time.Second || !strings.Contains(strings.Join(a.Notes, "\n"), "db1/cpu: 1 of its 29 samples cover more than one interval of 2s (up to 4s) and are left out") {
		t.Fatalf("lambda %v, notes %q", a.Config.Lambda, a.Notes)
	}
}

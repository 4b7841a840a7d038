package importer

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t *testing.T, f Format, file string, opt Options) []monitor.Sample {
	t.Helper()
	s, err := Parse(f, file, readTestdata(t, file), opt)
	if err != nil {
		t.Fatalf("Parse(%s, %s): %v", f, file, err)
	}
	if len(s) == 0 {
		t.Fatalf("Parse(%s, %s): no samples", f, file)
	}
	return s
}

// pick returns the samples of one resource and metric, in time order.
func pick(s []monitor.Sample, resource, metric string) []monitor.Sample {
	var out []monitor.Sample
	for _, x := range s {
		if x.Resource == resource && x.Metric == metric {
			out = append(out, x)
		}
	}
	return out
}

// at returns the value of resource/metric for the interval starting at start.
func at(t *testing.T, s []monitor.Sample, resource, metric string, start time.Time) monitor.Sample {
	t.Helper()
	for _, x := range s {
		if x.Resource == resource && x.Metric == metric && x.Start.Equal(start) {
			return x
		}
	}
	t.Fatalf("no %s %s sample starting at %s", resource, metric, start)
	return monitor.Sample{}
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func wantNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if !near(got, want, tol) {
		t.Errorf("%s = %v, want %v (±%v)", what, got, want, tol)
	}
}

// checkCPU asserts that every interval's CPU shares of resource lie in
// 0..100 and add up to about 100.
func checkCPU(t *testing.T, s []monitor.Sample, resource string, tol float64) {
	t.Helper()
	sums := map[time.Time]float64{}
	n := 0
	for _, x := range s {
		if x.Resource != resource {
			continue
		}
		if x.Value < -0.001 || x.Value > 100.001 {
			t.Errorf("%s %s at %s = %v, outside 0..100", resource, x.Metric, x.Start, x.Value)
		}
		switch x.Metric {
		case monitor.CPUUserPct, monitor.CPUSystemPct, monitor.CPUIowaitPct, monitor.CPUStealPct, monitor.CPUIdlePct:
			sums[x.Start] += x.Value
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no CPU samples for %s", resource)
	}
	for start, sum := range sums {
		if !near(sum, 100, tol) {
			t.Errorf("%s shares at %s add up to %v, want 100±%v", resource, start, sum, tol)
		}
	}
}

// checkCommon asserts what every sample of a parse must satisfy; host ""
// accepts any host (an input may hold several).
func checkCommon(t testing.TB, s []monitor.Sample, source, host string) {
	t.Helper()
	for i, x := range s {
		if x.Source != source || x.Host == "" || host != "" && x.Host != host || x.Resource == "" || x.Metric == "" {
			t.Fatalf("sample %d = %+v, want source %q host %q and names", i, x, source, host)
		}
		if math.IsNaN(x.Value) || math.IsInf(x.Value, 0) || x.Period < 0 {
			t.Fatalf("sample %d = %+v: bad value or period", i, x)
		}
		if i > 0 && x.Start.Before(s[i-1].Start) {
			t.Fatalf("sample %d starts before sample %d", i, i-1)
		}
	}
}

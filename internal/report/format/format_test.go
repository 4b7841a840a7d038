package format

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

func TestStyles(t *testing.T) {
	one := stats.Estimate{Mean: 501.333, SE: math.NaN(), N: 1}
	two := stats.Estimate{Mean: 501.333, SE: 8.666, N: 2}
	none := stats.Estimate{Mean: math.NaN(), SE: math.NaN()}
	for _, c := range []struct{ got, want string }{
		{Page.Est(two, 1), "501.3 ± 8.7"},
		{Page.Est(one, 1), "501.3"},
		{Page.Est(none, 1), "–"},
		{Terminal.Est(none, 0), "-"},
		{Page.Micros(850), "850 µs"},
		{Terminal.Micros(850), "850µs"},
		{Page.Micros(1500), "1.50 ms"},
		{Terminal.Micros(2_100_000), "2.10s"},
		{Page.Micros(-1500), "-1.50 ms"},
		{Terminal.Micros(math.NaN()), "-"},
		{Page.BytesPerSec(512), "512 B/s"},
		{Page.BytesPerSec(1536), "1.5 KiB/s"},
		{Terminal.BytesPerSec(3 << 20), "3.00 MiB/s"},
		{Page.BytesPerSec(math.NaN()), "–"},
		{Page.Percent(42.4, 0), "42%"},
		{Terminal.Percent(42.45, 1), "42.5%"},
		{Terminal.Percent(math.NaN(), 1), "-"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Plural(1, "run"), "1 run"},
		{Plural(0, "run"), "0 runs"},
		{Plural(3, "level"), "3 levels"},
		{Seconds(10), "10 s"},
		{Seconds(2.5), "2.5 s"},
		{Num(12345), "12345"},
		{Num(0.012345), "0.01235"},
		{Truncate("  abcdef ", 4), "abc…"},
		{Truncate("abc", 4), "abc"},
		{LoadText("open", 200), "200 req/s"},
		{LoadText("closed", 8), "8 clients"},
		{LoadUnit(""), "req/s"},
		{LoadAxis("closed").Label, "clients"},
		{LoadAxis("open").Label, "offered load"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A latency unit changes only from 2 of the larger unit on a scale, but
// from 1 of it for a single value.
func TestLatencyUnits(t *testing.T) {
	if u, div := LatencyUnit(1999); u != "µs" || div != 1 {
		t.Errorf("LatencyUnit(1999) = %s, %g", u, div)
	}
	if u, div := LatencyUnit(2000); u != "ms" || div != 1e3 {
		t.Errorf("LatencyUnit(2000) = %s, %g", u, div)
	}
	if u, div := LatencyUnit(3e6); u != "s" || div != 1e6 {
		t.Errorf("LatencyUnit(3e6) = %s, %g", u, div)
	}
	if u, div, dec := MicrosUnit(1000); u != "ms" || div != 1e3 || dec != 2 {
		t.Errorf("MicrosUnit(1000) = %s, %g, %d", u, div, dec)
	}
}

// SecondsRounded rounds half away from zero and prints what %g prints of
// the rounded value, so the pressure tables read as they always have.
func TestSecondsRounded(t *testing.T) {
	for _, c := range []struct {
		secs float64
		want string
	}{{7.25, "7.3 s"}, {60, "60 s"}, {0.04, "0 s"}, {2.5, "2.5 s"}, {1209600, "1.2096e+06 s"}} {
		if got := SecondsRounded(c.secs, 1); got != c.want {
			t.Errorf("SecondsRounded(%g, 1) = %q, want %q", c.secs, got, c.want)
		}
	}
	for i := range 20000 {
		secs := float64(i) * 0.37
		if got, want := SecondsRounded(secs, 1), fmt.Sprintf("%g s", math.Round(secs*10)/10); got != want {
			t.Fatalf("SecondsRounded(%g, 1) = %q, %%g prints %q", secs, got, want)
		}
	}
}

func TestExact(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0.95, "0.95"}, {1e-6, "0.000001"}, {1234567.125, "1234567.125"}, {80, "80"}} {
		if got := Exact(c.v); got != c.want {
			t.Errorf("Exact(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

// IDs of the names the tests and examples use stay as the page has always
// made them.
func TestID(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"small", "small"},
		{"piops-300", "piops-300"},
		{"Fast.2", "fast-2"},
		{"type-small_iops-300", "type-small-iops-300"},
		{"", ""},
	} {
		if got := ID(c.name); got != c.want {
			t.Errorf("ID(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSentences(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Capitalize("cpu saturates first"), "Cpu saturates first"},
		{Capitalize("Δtau stays small"), "Δtau stays small"}, // the first letter whole, not its first byte
		{Capitalize(""), ""},
		{Sentence("  no knee "), "no knee."},
		{Sentence("no knee."), "no knee."},
		{Sentence(" "), ""},
		{strings.Join(Distinct([]string{"b", "a", "b", "c", "a"}), ","), "b,a,c"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

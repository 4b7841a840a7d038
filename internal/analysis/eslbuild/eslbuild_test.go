package eslbuild

import (
	"testing"
)

func TestReadShare(t *testing.T) {
	for _, c := range []struct {
		mix  map[string]float64
		pct  float64
		rmw  bool
		fail bool
	}{
		{mix: map[string]float64{"read": 1}, pct: 100},
		{mix: map[string]float64{"update": 1}, pct: 0},
		{mix: map[string]float64{"read": 0.75, "update": 0.25}, pct: 75},
		// read_modify_write is one read and one write: 0.5 + 0.5 reads of
		// 0.5 + 1 I/Os.
		{mix: map[string]float64{"read": 0.5, "read_modify_write": 0.5}, pct: 66.7, rmw: true},
		{mix: map[string]float64{"read": 0.5, "readmodifywrite": 0.5}, pct: 66.7, rmw: true},
		{mix: map[string]float64{"scan": 0.95, "insert": 0.05}, fail: true},
		{mix: map[string]float64{"lookup": 1}, fail: true},
		{mix: nil, fail: true},
	} {
		pct, rmw, err := ReadShare(c.mix)
		if (err != nil) != c.fail || err == nil && (pct != c.pct || rmw != c.rmw) {
			t.Errorf("%v: %v %v %v", c.mix, pct, rmw, err)
		}
	}
}

func TestParseBlockSize(t *testing.T) {
	for s, want := range map[string]int64{"4KiB": 4096, "1MiB": 1 << 20, "4096": 4096, " 64k ": 64 << 10, "": 4096} {
		if got, err := ParseBlockSize(s); err != nil || got != want {
			t.Errorf("%q: %d, %v", s, got, err)
		}
	}
	for _, bad := range []string{"4 TB", "KiB", "-4KiB", "0"} {
		if _, err := ParseBlockSize(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

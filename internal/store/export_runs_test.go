package store

import (
	"strconv"
	"testing"
	"time"
)

// The runs export carries each run's measured percentiles, merged over its
// intervals, for all operations and per operation; warmup is left out and
// an operation a run never completed is empty. The values are uniform
// 1..2000 µs for reads, so the expected percentiles are known without
// Headroom's merge: p50 = 1000, p99 = 1980, max = 2000 (within the
// histogram's 3 significant digits).
func TestExportRunsCarriesMergedPercentiles(t *testing.T) {
	s := newStore(t)
	id, _ := s.StartRun(testRun(0))
	start := testRun(0).Start
	uniform := func(lo, hi int64) Interval {
		h := NewHistogram()
		for v := lo; v <= hi; v++ {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		return Interval{Hist: h, Count: hi - lo + 1}
	}
	w := uniform(50_000, 60_000) // warmup: far above, must not count
	w.RunID, w.Phase, w.Op, w.Start, w.Duration = id, "warmup", "read", start, time.Second
	a := uniform(1, 1000)
	a.RunID, a.Phase, a.Op, a.Start, a.Duration = id, "measure", "read", start.Add(time.Second), time.Second
	b := uniform(1001, 2000)
	b.RunID, b.Phase, b.Op, b.Start, b.Duration = id, "measure", "read", start.Add(2*time.Second), time.Second
	u := uniform(3000, 3000)
	u.RunID, u.Phase, u.Op, u.Start, u.Duration = id, "measure", "update", start.Add(2*time.Second), time.Second
	if err := s.AddIntervals([]Interval{w, a, b, u}); err != nil {
		t.Fatal(err)
	}
	other, _ := s.StartRun(testRun(1)) // no intervals at all

	near := func(what, got string, want float64) {
		t.Helper()
		v, err := strconv.ParseFloat(got, 64)
		if err != nil || v < want*0.999-1 || v > want*1.001+1 {
			t.Errorf("%s = %q, want %v", what, got, want)
		}
	}
	for _, format := range []string{"csv", "json"} {
		var rows []map[string]string
		if format == "csv" {
			rows = exportCSV(t, s, "runs")
		} else {
			for _, r := range exportJSON(t, s, "runs") {
				m := map[string]string{}
				for k, v := range r {
					if v == nil {
						m[k] = ""
					} else if n, ok := v.(interface{ String() string }); ok {
						m[k] = n.String()
					}
				}
				rows = append(rows, m)
			}
		}
		if len(rows) != 2 || rows[0]["id"] != strconv.FormatInt(id, 10) || rows[1]["id"] != strconv.FormatInt(other, 10) {
			t.Fatalf("%s: runs %v", format, rows)
		}
		r := rows[0]
		near(format+" read_p50_us", r["read_p50_us"], 1000)
		near(format+" read_p99_us", r["read_p99_us"], 1980)
		near(format+" read_max_us", r["read_max_us"], 2000)
		near(format+" update_p50_us", r["update_p50_us"], 3000)
		// All operations: 2000 reads and one update at 3000 µs.
		near(format+" p50_us", r["p50_us"], 1000)
		near(format+" p999_us", r["p999_us"], 1998)
		near(format+" max_us", r["max_us"], 3000)
		for _, col := range []string{"p50_us", "read_p99_us", "update_max_us"} {
			if rows[1][col] != "" {
				t.Errorf("%s: run without intervals has %s = %q", format, col, rows[1][col])
			}
		}
	}
}

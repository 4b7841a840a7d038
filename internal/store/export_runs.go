package store

import (
	"fmt"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// runLatencyCols are the latency columns the runs export adds for each run:
// its measured phase's histograms merged over the run (all operations, then
// one set per operation, prefixed with its name), so that an analyst gets a
// run's percentiles without decoding histograms.
var runLatencyCols = []struct {
	name string
	get  func(histSummary) any
}{
	{"p50_us", func(s histSummary) any { return s.p50 }},
	{"p90_us", func(s histSummary) any { return s.p90 }},
	{"p95_us", func(s histSummary) any { return s.p95 }},
	{"p99_us", func(s histSummary) any { return s.p99 }},
	{"p999_us", func(s histSummary) any { return s.p999 }},
	{"max_us", func(s histSummary) any { return s.max }},
}

// runLatencies holds the merged summaries of every run's measured phase:
// by run id, then by operation ("" = all operations).
type runLatencies struct {
	ops  []string // operation names in the store, sorted
	runs map[int64]map[string]histSummary
}

// readRunLatencies merges the measured intervals of every run. It reads
// them all before the runs query starts, because the store has one
// connection and cannot interleave two result sets.
func (s *Store) readRunLatencies() (*runLatencies, error) {
	doing := "merging each run's latency histograms"
	rows, err := s.db.Query(`SELECT run_id, op, hist FROM interval WHERE phase = 'measure' ORDER BY run_id`)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	defer rows.Close()
	out := &runLatencies{runs: map[int64]map[string]histSummary{}}
	seenOps := map[string]bool{}
	var cur int64 = -1
	merged := map[string]*hdrhistogram.Histogram{}
	flush := func() {
		if cur < 0 {
			return
		}
		sums := make(map[string]histSummary, len(merged))
		for op, h := range merged {
			sums[op] = summarize(h)
		}
		out.runs[cur] = sums
		clear(merged)
	}
	for rows.Next() {
		var id int64
		var op, enc string
		if err := rows.Scan(&id, &op, &enc); err != nil {
			return nil, s.fail(doing, err)
		}
		if id != cur {
			flush()
			cur = id
		}
		h, err := decodeHist(enc)
		if err != nil {
			return nil, fmt.Errorf("results database %s: run %d %s: %w", s.path, id, op, err)
		}
		seenOps[op] = true
		for _, key := range []string{"", op} {
			if merged[key] == nil {
				merged[key] = NewHistogram()
			}
			merged[key].Merge(h)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	flush()
	for op := range seenOps {
		out.ops = append(out.ops, op)
	}
	sort.Strings(out.ops)
	return out, nil
}

// cols are the added export columns: the merged ones, then per operation.
func (l *runLatencies) cols() []exportCol {
	var cols []exportCol
	for _, op := range append([]string{""}, l.ops...) {
		prefix := ""
		if op != "" {
			prefix = op + "_"
		}
		for _, c := range runLatencyCols {
			cols = append(cols, exportCol{name: prefix + c.name, kind: kInt})
		}
	}
	return cols
}

// values appends run id's latency columns to vals: nil (NULL) where the
// run measured nothing of an operation.
func (l *runLatencies) values(vals []any, id int64) []any {
	sums := l.runs[id]
	for _, op := range append([]string{""}, l.ops...) {
		s, ok := sums[op]
		for _, c := range runLatencyCols {
			if ok && s.valid {
				vals = append(vals, c.get(s))
			} else {
				vals = append(vals, nil)
			}
		}
	}
	return vals
}

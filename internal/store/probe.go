package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Probe is one run of the black-box capacity probe (`headroom probe`,
// seed-digest §3). Its windows and their seconds are in ProbeWindow.
// Latencies are microseconds; NaN stands for NULL (unknown).
type Probe struct {
	ID            int64
	Start, End    time.Time // End is zero while the probe runs
	Target        string    // target type
	RTTAddr       string    // host:port of the RTT guard; "" when it was off
	ConfigJSON    string    // every probe parameter, as JSON
	SLAPercentile float64
	SLAThreshold  time.Duration
	Status        string  // running, completed, interrupted or failed
	Stop          string  // why the algorithm stopped (probe.Stop*); "" while running
	Estimate      float64 // T_estimate in req/s; NaN when none
	LowerBound    float64 // highest rate that met the SLA, req/s; NaN when none
	ClientLimited bool
	BaselineRTTUs float64 // NaN without the RTT guard
	Note          string
	// Baseline is the unloaded latency measured before the first window
	// (table probe_baseline); nil when none was stored.
	Baseline *ProbeBaseline
}

// ProbeBaseline is a probe's unloaded end-to-end latency, measured in a
// short window at a low rate before its first window. The pass rule of
// every window adds UnloadedUs to the RTT before it (docs/probe.md).
type ProbeBaseline struct {
	Rate              float64 // req/s held
	Duration          time.Duration
	Start             time.Time
	Completed, Errors int64
	LatencyUs, P90Us  float64 // median and p90 of the successful requests
	RTTUs             float64 // the probe's baseline RTT; NaN without the guard
	UnloadedUs        float64 // max(0, LatencyUs - RTTUs)
	Tries             int
	Hist              *hdrhistogram.Histogram
}

// ProbeTrend is Headroom's unstable-queue rule applied to one window's
// per-second medians (Mann-Kendall p-value and Sen's slope; docs/probe.md).
type ProbeTrend struct {
	Seconds  int     // seconds with a median
	Judged   bool    // false: too short, or the rule was off
	P        float64 // one-sided p-value of an upward trend; NaN when not judged
	SlopeUs  float64 // Sen's slope, µs per second; NaN when not judged
	RiseUs   float64 // slope x the seconds spanned, µs; NaN when not judged
	Unstable bool
}

// ProbePercentiles are the latency percentiles stored for every window, in
// the order of ProbeWindow.Percentiles (seed 004 §4.4: percentiles 2 to 99
// over rate form the latency/throughput surface).
var ProbePercentiles = []float64{2, 10, 25, 50, 75, 90, 95, 99}

// ProbeWindow is one window of a probe: one rate held for a few seconds.
type ProbeWindow struct {
	ProbeID  int64
	Seq      int    // 0-based order
	Phase    string // ramp-up, back-off or fine-tune
	Rate     float64
	Offered  float64 // requests sent per second
	Achieved float64 // successful completions per second
	Start    time.Time
	Duration time.Duration
	// RTT measured before and after the window (µs; NaN when unmeasured).
	RTTBeforeUs, RTTAfterUs float64
	PassedSeconds           int
	Accepted                bool
	MetSLA                  bool
	Discarded               bool
	Verdict                 string
	Sent, Completed, Errors int64
	Late, Dropped           int64
	ErrorKinds              map[string]int64
	// Percentiles holds the latency (µs) at each of ProbePercentiles.
	Percentiles []float64
	SLAUs       float64 // latency at the probe's SLA percentile
	// LimitUs is the pass rule's bound on a second's median (RTT before +
	// unloaded latency beyond the RTT + margin); NaN for windows stored
	// before the bound was (table probe_window_rule).
	LimitUs float64
	// Trend is the unstable-queue rule's reading (probe_window_rule);
	// Judged is false for windows stored before the rule.
	Trend   ProbeTrend
	Hist    *hdrhistogram.Histogram
	Note    string
	Seconds []ProbeSecond
}

// ProbeSecond is one second of a probe window.
type ProbeSecond struct {
	Index                   int
	Sent, Completed, Errors int64
	Late, Dropped           int64
	P50Us, P90Us            float64 // NaN when the second had no successful request
	RTTUs                   float64 // sampled during the second; NaN when none or failed
	Pass                    bool
}

// The probe tables came after schema version 1; like server_time they are
// created on first use, and readers treat a file without them as holding no
// probe. Older Headroom builds ignore them.
var probeDDL = []string{
	`CREATE TABLE IF NOT EXISTS probe (
		id               INTEGER PRIMARY KEY,
		start_ns         INTEGER NOT NULL,
		end_ns           INTEGER,
		target           TEXT    NOT NULL,
		rtt_addr         TEXT    NOT NULL,
		config_json      TEXT    NOT NULL,
		sla_percentile   REAL    NOT NULL,
		sla_threshold_us REAL    NOT NULL,
		status           TEXT    NOT NULL,
		stop             TEXT    NOT NULL,
		estimate         REAL,
		lower_bound      REAL,
		client_limited   INTEGER NOT NULL,
		baseline_rtt_us  REAL,
		note             TEXT    NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS probe_window (
		probe_id       INTEGER NOT NULL REFERENCES probe (id),
		seq            INTEGER NOT NULL,
		phase          TEXT    NOT NULL,
		rate           REAL    NOT NULL,
		offered        REAL    NOT NULL,
		achieved       REAL    NOT NULL,
		start_ns       INTEGER NOT NULL,
		duration_ns    INTEGER NOT NULL,
		rtt_before_us  REAL,
		rtt_after_us   REAL,
		seconds        INTEGER NOT NULL,
		passed_seconds INTEGER NOT NULL,
		accepted       INTEGER NOT NULL,
		met_sla        INTEGER NOT NULL,
		discarded      INTEGER NOT NULL,
		verdict        TEXT    NOT NULL,
		sent           INTEGER NOT NULL,
		completed      INTEGER NOT NULL,
		errors         INTEGER NOT NULL,
		late           INTEGER NOT NULL,
		dropped        INTEGER NOT NULL,
		error_kinds    TEXT    NOT NULL,
		p2_us REAL, p10_us REAL, p25_us REAL, p50_us REAL, p75_us REAL, p90_us REAL, p95_us REAL, p99_us REAL,
		sla_us         REAL,
		hist           TEXT    NOT NULL,
		note           TEXT    NOT NULL,
		PRIMARY KEY (probe_id, seq)
	)`,
	`CREATE TABLE IF NOT EXISTS probe_second (
		probe_id   INTEGER NOT NULL,
		window_seq INTEGER NOT NULL,
		second     INTEGER NOT NULL,
		sent       INTEGER NOT NULL,
		completed  INTEGER NOT NULL,
		errors     INTEGER NOT NULL,
		late       INTEGER NOT NULL,
		dropped    INTEGER NOT NULL,
		p50_us     REAL,
		p90_us     REAL,
		rtt_us     REAL,
		pass       INTEGER NOT NULL,
		PRIMARY KEY (probe_id, window_seq, second),
		FOREIGN KEY (probe_id, window_seq) REFERENCES probe_window (probe_id, seq)
	)`,
	// Added with the baseline and the unstable-queue rule. A file made
	// before them has the three tables above and none of these; readers
	// treat that as no baseline and no judged trend.
	`CREATE TABLE IF NOT EXISTS probe_baseline (
		probe_id    INTEGER PRIMARY KEY REFERENCES probe (id),
		rate        REAL    NOT NULL,
		duration_ns INTEGER NOT NULL,
		start_ns    INTEGER NOT NULL,
		completed   INTEGER NOT NULL,
		errors      INTEGER NOT NULL,
		latency_us  REAL    NOT NULL,
		p90_us      REAL    NOT NULL,
		rtt_us      REAL,
		unloaded_us REAL    NOT NULL,
		tries       INTEGER NOT NULL,
		hist        TEXT    NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS probe_window_rule (
		probe_id       INTEGER NOT NULL,
		window_seq     INTEGER NOT NULL,
		limit_us       REAL,
		trend_seconds  INTEGER NOT NULL,
		trend_judged   INTEGER NOT NULL,
		trend_p        REAL,
		trend_slope_us REAL,
		trend_rise_us  REAL,
		unstable       INTEGER NOT NULL,
		PRIMARY KEY (probe_id, window_seq),
		FOREIGN KEY (probe_id, window_seq) REFERENCES probe_window (probe_id, seq)
	)`,
}

// probePercentileColumns name the columns of ProbePercentiles, in order.
const probePercentileColumns = `p2_us, p10_us, p25_us, p50_us, p75_us, p90_us, p95_us, p99_us`

// nullable stores NaN and infinities as NULL.
func nullable(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func fromNullable(v sql.NullFloat64) float64 {
	if !v.Valid {
		return math.NaN()
	}
	return v.Float64
}

// StartProbe records the start of a probe with status running and returns
// its ID. A zero p.Start is set to now; the outcome fields are ignored.
func (s *Store) StartProbe(p Probe) (int64, error) {
	if p.Start.IsZero() {
		p.Start = time.Now()
	}
	doing := "starting a probe"
	var id int64
	err := s.write(doing, probeDDL, func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO probe (start_ns, target, rtt_addr, config_json, sla_percentile, sla_threshold_us, status, stop, client_limited, note)
			VALUES (?, ?, ?, ?, ?, ?, ?, '', 0, '')`,
			p.Start.UnixNano(), p.Target, p.RTTAddr, p.ConfigJSON, p.SLAPercentile, float64(p.SLAThreshold.Nanoseconds())/1e3, StatusRunning)
		if err != nil {
			return s.fail(doing, err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}

// FinishProbe records how probe id ended: p's Status (completed,
// interrupted or failed), Stop, Estimate, LowerBound, ClientLimited,
// BaselineRTTUs and Note. A zero p.End is set to now.
func (s *Store) FinishProbe(id int64, p Probe) error {
	switch p.Status {
	case StatusCompleted, StatusInterrupted, StatusFailed:
	default:
		return fmt.Errorf("results database %s: cannot finish probe %d with status %q (want %s, %s or %s)",
			s.path, id, p.Status, StatusCompleted, StatusInterrupted, StatusFailed)
	}
	if p.End.IsZero() {
		p.End = time.Now()
	}
	if err := s.beforeWrite(); err != nil {
		return err
	}
	res, err := s.db.Exec(`UPDATE probe SET end_ns = ?, status = ?, stop = ?, estimate = ?, lower_bound = ?,
		client_limited = ?, baseline_rtt_us = ?, note = ? WHERE id = ?`,
		p.End.UnixNano(), p.Status, p.Stop, nullable(p.Estimate), nullable(p.LowerBound),
		p.ClientLimited, nullable(p.BaselineRTTUs), p.Note, id)
	if err != nil {
		return s.fail(fmt.Sprintf("finishing probe %d", id), err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("results database %s: cannot finish probe %d: no such probe", s.path, id)
	}
	return nil
}

// SetProbeBaseline records probe id's unloaded latency (one per probe; a
// second call replaces the first).
func (s *Store) SetProbeBaseline(id int64, b ProbeBaseline) error {
	doing := fmt.Sprintf("writing the baseline of probe %d", id)
	hist, err := encodeHist(b.Hist)
	if err != nil {
		return fmt.Errorf("results database %s: %s: %w", s.path, doing, err)
	}
	if b.Start.IsZero() {
		b.Start = time.Now()
	}
	return s.write(doing, probeDDL, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO probe_baseline (probe_id, rate, duration_ns, start_ns, completed, errors,
			latency_us, p90_us, rtt_us, unloaded_us, tries, hist) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, b.Rate, int64(b.Duration), b.Start.UnixNano(), b.Completed, b.Errors, b.LatencyUs, b.P90Us,
			nullable(b.RTTUs), b.UnloadedUs, b.Tries, hist); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// AddProbeWindow writes one window and its seconds in one transaction, so
// a reader never sees a window without its seconds. The histogram is
// encoded before the transaction starts.
func (s *Store) AddProbeWindow(w ProbeWindow) error {
	doing := fmt.Sprintf("writing window %d of probe %d", w.Seq, w.ProbeID)
	if len(w.Percentiles) != len(ProbePercentiles) {
		return fmt.Errorf("results database %s: %s: %d percentiles given, want %d (store.ProbePercentiles)", s.path, doing, len(w.Percentiles), len(ProbePercentiles))
	}
	hist, err := encodeHist(w.Hist)
	if err != nil {
		return fmt.Errorf("results database %s: %s: %w", s.path, doing, err)
	}
	kinds := "{}"
	if len(w.ErrorKinds) > 0 {
		b, err := json.Marshal(w.ErrorKinds)
		if err != nil {
			return fmt.Errorf("results database %s: %s: %w", s.path, doing, err)
		}
		kinds = string(b)
	}
	return s.write(doing, probeDDL, func(tx *sql.Tx) error {
		args := []any{w.ProbeID, w.Seq, w.Phase, w.Rate, w.Offered, w.Achieved, w.Start.UnixNano(), int64(w.Duration),
			nullable(w.RTTBeforeUs), nullable(w.RTTAfterUs), len(w.Seconds), w.PassedSeconds, w.Accepted, w.MetSLA, w.Discarded,
			w.Verdict, w.Sent, w.Completed, w.Errors, w.Late, w.Dropped, kinds}
		for _, p := range w.Percentiles {
			args = append(args, nullable(p))
		}
		args = append(args, nullable(w.SLAUs), hist, w.Note)
		if _, err := tx.Exec(`INSERT INTO probe_window (probe_id, seq, phase, rate, offered, achieved, start_ns, duration_ns,
			rtt_before_us, rtt_after_us, seconds, passed_seconds, accepted, met_sla, discarded, verdict,
			sent, completed, errors, late, dropped, error_kinds, `+probePercentileColumns+`, sla_us, hist, note)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...); err != nil {
			return s.fail(doing, err)
		}
		if _, err := tx.Exec(`INSERT INTO probe_window_rule (probe_id, window_seq, limit_us, trend_seconds, trend_judged, trend_p, trend_slope_us, trend_rise_us, unstable)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			w.ProbeID, w.Seq, nullable(w.LimitUs), w.Trend.Seconds, w.Trend.Judged, nullable(w.Trend.P),
			nullable(w.Trend.SlopeUs), nullable(w.Trend.RiseUs), w.Trend.Unstable); err != nil {
			return s.fail(doing, err)
		}
		for _, sec := range w.Seconds {
			if _, err := tx.Exec(`INSERT INTO probe_second (probe_id, window_seq, second, sent, completed, errors, late, dropped, p50_us, p90_us, rtt_us, pass)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				w.ProbeID, w.Seq, sec.Index, sec.Sent, sec.Completed, sec.Errors, sec.Late, sec.Dropped,
				nullable(sec.P50Us), nullable(sec.P90Us), nullable(sec.RTTUs), sec.Pass); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// Probes returns every probe in ID order; none when the file has no probe
// tables.
func (s *Store) Probes() ([]Probe, error) {
	const doing = "reading probes"
	if ok, err := s.hasTable(doing, "probe"); err != nil || !ok {
		return nil, err
	}
	ps, err := readAll(s, doing, `SELECT id, start_ns, end_ns, target, rtt_addr, config_json, sla_percentile, sla_threshold_us,
		status, stop, estimate, lower_bound, client_limited, baseline_rtt_us, note FROM probe ORDER BY id`, nil, func(rows *sql.Rows) (Probe, error) {
		var p Probe
		var start, end sql.NullInt64
		var threshold float64
		var est, lb, rtt sql.NullFloat64
		err := rows.Scan(&p.ID, &start, &end, &p.Target, &p.RTTAddr, &p.ConfigJSON, &p.SLAPercentile, &threshold,
			&p.Status, &p.Stop, &est, &lb, &p.ClientLimited, &rtt, &p.Note)
		p.Start, p.End = fromNS(start), fromNS(end)
		p.SLAThreshold = time.Duration(math.Round(threshold * 1e3))
		p.Estimate, p.LowerBound, p.BaselineRTTUs = fromNullable(est), fromNullable(lb), fromNullable(rtt)
		return p, err
	})
	if err != nil || len(ps) == 0 {
		return ps, err
	}
	if ok, err := s.hasTable(doing, "probe_baseline"); err != nil || !ok {
		return ps, err
	}
	type keyed struct {
		id int64
		b  ProbeBaseline
	}
	bs, err := readAll(s, doing, `SELECT probe_id, rate, duration_ns, start_ns, completed, errors, latency_us, p90_us, rtt_us,
		unloaded_us, tries, hist FROM probe_baseline`, nil, func(rows *sql.Rows) (keyed, error) {
		var k keyed
		var dur, start int64
		var rtt sql.NullFloat64
		var hist string
		if err := rows.Scan(&k.id, &k.b.Rate, &dur, &start, &k.b.Completed, &k.b.Errors, &k.b.LatencyUs, &k.b.P90Us, &rtt,
			&k.b.UnloadedUs, &k.b.Tries, &hist); err != nil {
			return k, err
		}
		k.b.Duration, k.b.Start, k.b.RTTUs = time.Duration(dur), time.Unix(0, start).UTC(), fromNullable(rtt)
		var err error
		k.b.Hist, err = decodeHist(hist)
		return k, err
	})
	if err != nil {
		return nil, err
	}
	for _, k := range bs {
		for i := range ps {
			if ps[i].ID == k.id {
				b := k.b
				ps[i].Baseline = &b
			}
		}
	}
	return ps, nil
}

// ProbeWindows returns the windows of probe probeID in order, each with its
// seconds and decoded histogram.
func (s *Store) ProbeWindows(probeID int64) ([]ProbeWindow, error) {
	doing := fmt.Sprintf("reading the windows of probe %d", probeID)
	if ok, err := s.hasTable(doing, "probe"); err != nil || !ok {
		return nil, err
	}
	rows, err := s.db.Query(`SELECT seq, phase, rate, offered, achieved, start_ns, duration_ns, rtt_before_us, rtt_after_us,
		passed_seconds, accepted, met_sla, discarded, verdict, sent, completed, errors, late, dropped, error_kinds,
		`+probePercentileColumns+`, sla_us, hist, note FROM probe_window WHERE probe_id = ? ORDER BY seq`, probeID)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	var out []ProbeWindow
	index := map[int]int{}
	for rows.Next() {
		w := ProbeWindow{ProbeID: probeID, LimitUs: math.NaN(), Trend: ProbeTrend{P: math.NaN(), SlopeUs: math.NaN(), RiseUs: math.NaN()}}
		var start, dur int64
		var before, after, sla sql.NullFloat64
		pcts := make([]sql.NullFloat64, len(ProbePercentiles))
		var kinds, hist string
		dest := []any{&w.Seq, &w.Phase, &w.Rate, &w.Offered, &w.Achieved, &start, &dur, &before, &after,
			&w.PassedSeconds, &w.Accepted, &w.MetSLA, &w.Discarded, &w.Verdict, &w.Sent, &w.Completed, &w.Errors, &w.Late, &w.Dropped, &kinds}
		for i := range pcts {
			dest = append(dest, &pcts[i])
		}
		dest = append(dest, &sla, &hist, &w.Note)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, s.fail(doing, err)
		}
		w.Start, w.Duration = time.Unix(0, start).UTC(), time.Duration(dur)
		w.RTTBeforeUs, w.RTTAfterUs, w.SLAUs = fromNullable(before), fromNullable(after), fromNullable(sla)
		for _, p := range pcts {
			w.Percentiles = append(w.Percentiles, fromNullable(p))
		}
		if kinds != "{}" {
			if err := json.Unmarshal([]byte(kinds), &w.ErrorKinds); err != nil {
				rows.Close()
				return nil, fmt.Errorf("results database %s: %s: error kinds of window %d: %w", s.path, doing, w.Seq, err)
			}
		}
		if w.Hist, err = decodeHist(hist); err != nil {
			rows.Close()
			return nil, fmt.Errorf("results database %s: %s: window %d: %w", s.path, doing, w.Seq, err)
		}
		index[w.Seq] = len(out)
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	if err := s.readWindowRules(doing, probeID, out, index); err != nil {
		return nil, err
	}
	// A second query rather than a join: the store has one connection, so
	// the first rows must be closed before it runs.
	srows, err := s.db.Query(`SELECT window_seq, second, sent, completed, errors, late, dropped, p50_us, p90_us, rtt_us, pass
		FROM probe_second WHERE probe_id = ? ORDER BY window_seq, second`, probeID)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	defer srows.Close()
	for srows.Next() {
		var seq int
		var sec ProbeSecond
		var p50, p90, rtt sql.NullFloat64
		if err := srows.Scan(&seq, &sec.Index, &sec.Sent, &sec.Completed, &sec.Errors, &sec.Late, &sec.Dropped, &p50, &p90, &rtt, &sec.Pass); err != nil {
			return nil, s.fail(doing, err)
		}
		sec.P50Us, sec.P90Us, sec.RTTUs = fromNullable(p50), fromNullable(p90), fromNullable(rtt)
		if i, ok := index[seq]; ok {
			out[i].Seconds = append(out[i].Seconds, sec)
		}
	}
	if err := srows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	return out, nil
}

// readWindowRules fills the pass limit and trend of the windows in out
// (index maps a window's seq to its place) from probe_window_rule; windows
// stored before it keep their unknown values.
func (s *Store) readWindowRules(doing string, probeID int64, out []ProbeWindow, index map[int]int) error {
	if ok, err := s.hasTable(doing, "probe_window_rule"); err != nil || !ok {
		return err
	}
	type rule struct {
		seq   int
		limit sql.NullFloat64
		t     ProbeTrend
	}
	rules, err := readAll(s, doing, `SELECT window_seq, limit_us, trend_seconds, trend_judged, trend_p, trend_slope_us, trend_rise_us, unstable
		FROM probe_window_rule WHERE probe_id = ?`, []any{probeID}, func(rows *sql.Rows) (rule, error) {
		var r rule
		var p, slope, rise sql.NullFloat64
		err := rows.Scan(&r.seq, &r.limit, &r.t.Seconds, &r.t.Judged, &p, &slope, &rise, &r.t.Unstable)
		r.t.P, r.t.SlopeUs, r.t.RiseUs = fromNullable(p), fromNullable(slope), fromNullable(rise)
		return r, err
	})
	if err != nil {
		return err
	}
	for _, r := range rules {
		if i, ok := index[r.seq]; ok {
			out[i].LimitUs, out[i].Trend = fromNullable(r.limit), r.t
		}
	}
	return nil
}

// The probe tables are exportable like the others (see Export). They are
// registered here so that the export code needs no probe-specific columns;
// ExportTables lists them once the export command knows to create them on
// a file that has none (EnsureProbeTables).
func init() {
	exportTables["probes"] = exportTable{
		cols: []exportCol{plain("id", kInt), plain("start_ns", kInt), plain("end_ns", kInt), plain("target", kText),
			plain("rtt_addr", kText), plain("config_json", kJSON), plain("sla_percentile", kFloat), plain("sla_threshold_us", kFloat),
			plain("status", kText), plain("stop", kText), plain("estimate", kFloat), plain("lower_bound", kFloat),
			plain("client_limited", kBool), plain("baseline_rtt_us", kFloat), plain("note", kText)},
		from: `FROM probe ORDER BY id`,
	}
	exportTables["probe_windows"] = exportTable{
		cols: []exportCol{plain("probe_id", kInt), plain("seq", kInt), plain("phase", kText), plain("rate", kFloat),
			plain("offered", kFloat), plain("achieved", kFloat), plain("start_ns", kInt), plain("duration_ns", kInt),
			plain("rtt_before_us", kFloat), plain("rtt_after_us", kFloat), plain("seconds", kInt), plain("passed_seconds", kInt),
			plain("accepted", kBool), plain("met_sla", kBool), plain("discarded", kBool), plain("verdict", kText),
			plain("sent", kInt), plain("completed", kInt), plain("errors", kInt), plain("late", kInt), plain("dropped", kInt),
			plain("error_kinds", kJSON),
			plain("p2_us", kFloat), plain("p10_us", kFloat), plain("p25_us", kFloat), plain("p50_us", kFloat),
			plain("p75_us", kFloat), plain("p90_us", kFloat), plain("p95_us", kFloat), plain("p99_us", kFloat),
			plain("sla_us", kFloat), plain("note", kText),
			{name: "hist", expr: "hist", kind: kText, jsonOnly: true}},
		from: `FROM probe_window ORDER BY probe_id, seq`,
	}
	exportTables["probe_seconds"] = exportTable{
		cols: []exportCol{plain("probe_id", kInt), plain("window_seq", kInt), plain("second", kInt),
			plain("sent", kInt), plain("completed", kInt), plain("errors", kInt), plain("late", kInt), plain("dropped", kInt),
			plain("p50_us", kFloat), plain("p90_us", kFloat), plain("rtt_us", kFloat), plain("pass", kBool)},
		from: `FROM probe_second ORDER BY probe_id, window_seq, second`,
	}
	exportTables["probe_baselines"] = exportTable{
		cols: []exportCol{plain("probe_id", kInt), plain("rate", kFloat), plain("duration_ns", kInt), plain("start_ns", kInt),
			plain("completed", kInt), plain("errors", kInt), plain("latency_us", kFloat), plain("p90_us", kFloat),
			plain("rtt_us", kFloat), plain("unloaded_us", kFloat), plain("tries", kInt),
			{name: "hist", expr: "hist", kind: kText, jsonOnly: true}},
		from: `FROM probe_baseline ORDER BY probe_id`,
	}
	exportTables["probe_window_rules"] = exportTable{
		cols: []exportCol{plain("probe_id", kInt), plain("window_seq", kInt), plain("limit_us", kFloat),
			plain("trend_seconds", kInt), plain("trend_judged", kBool), plain("trend_p", kFloat), plain("trend_slope_us", kFloat),
			plain("trend_rise_us", kFloat), plain("unstable", kBool)},
		from: `FROM probe_window_rule ORDER BY probe_id, window_seq`,
	}
}

// ProbeExportTables are the probe tables Export accepts.
var ProbeExportTables = []string{"probes", "probe_windows", "probe_seconds", "probe_baselines", "probe_window_rules"}

// EnsureProbeTables creates the probe tables when the file has none, so
// that exporting them from a campaign without a probe gives empty tables
// rather than an error.
func (s *Store) EnsureProbeTables() error {
	return s.write("creating the probe tables", probeDDL, func(*sql.Tx) error { return nil })
}

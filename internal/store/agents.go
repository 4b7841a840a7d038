package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Load agents (internal/agent, docs/fleet.md "Load agents"): a run driven by
// several agents stores the merged intervals in the interval table, as any
// run, and each agent's own intervals and outcome here. The tables are made
// on first use (schema version 1 either way); docs/results-schema.md
// documents them.
var agentDDL = []string{
	`CREATE TABLE IF NOT EXISTS agent_run (
		run_id      INTEGER NOT NULL REFERENCES run(id),
		agent       TEXT    NOT NULL,
		host        TEXT    NOT NULL,
		agent_index INTEGER NOT NULL,
		status      TEXT    NOT NULL,
		lost_ns     INTEGER,
		reason      TEXT    NOT NULL,
		detail      TEXT    NOT NULL,
		PRIMARY KEY (run_id, agent)
	)`,
	`CREATE TABLE IF NOT EXISTS agent_interval (
		run_id      INTEGER NOT NULL REFERENCES run(id),
		agent       TEXT    NOT NULL,
		phase       TEXT    NOT NULL,
		op          TEXT    NOT NULL,
		start_ns    INTEGER NOT NULL,
		duration_ns INTEGER NOT NULL,
		count       INTEGER NOT NULL,
		errors      INTEGER NOT NULL,
		late        INTEGER NOT NULL,
		dropped     INTEGER NOT NULL,
		p99_us      INTEGER,
		hist        TEXT    NOT NULL,
		PRIMARY KEY (run_id, agent, phase, op, start_ns)
	)`,
}

// Agent statuses of a run.
const (
	AgentCompleted = "completed" // sent every interval and its result
	AgentLost      = "lost"      // its connection ended before its result
	AgentBehind    = "behind"    // it fell behind the others and was let go
	AgentFailed    = "failed"    // it reported an error
)

// AgentRun is one agent's part of one run. Detail holds the share it was
// given, its clock offset and its own result (JSON, internal/agent).
type AgentRun struct {
	RunID  int64
	Agent  string
	Host   string
	Index  int
	Status string
	// LostAt is when the coordinator stopped counting the agent (zero
	// unless lost, behind or failed); Reason says why in one sentence.
	LostAt time.Time
	Reason string
	Detail json.RawMessage
}

// PutAgentRun writes (or replaces) one agent's part of a run.
func (s *Store) PutAgentRun(a AgentRun) error {
	const doing = "writing an agent's part of a run"
	detail := string(a.Detail)
	if detail == "" {
		detail = "{}"
	}
	var lost any
	if !a.LostAt.IsZero() {
		lost = a.LostAt.UnixNano()
	}
	return s.write(doing, agentDDL, func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT OR REPLACE INTO agent_run (run_id, agent, host, agent_index, status, lost_ns, reason, detail)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, a.RunID, a.Agent, a.Host, a.Index, a.Status, lost, a.Reason, detail); err != nil {
			return s.fail(doing, err)
		}
		return nil
	})
}

// AgentRuns returns the agents' parts of a run (every run's when runID <
// 0), by run and agent index; empty for a run without agents.
func (s *Store) AgentRuns(runID int64) ([]AgentRun, error) {
	const doing = "reading the agents' parts of runs"
	if ok, err := s.hasTable(doing, "agent_run"); err != nil || !ok {
		return nil, err
	}
	return readAll(s, doing, `SELECT run_id, agent, host, agent_index, status, lost_ns, reason, detail FROM agent_run
		WHERE ?1 < 0 OR run_id = ?1 ORDER BY run_id, agent_index`, []any{runID},
		func(rows *sql.Rows) (AgentRun, error) {
			var a AgentRun
			var lost sql.NullInt64
			var detail string
			err := rows.Scan(&a.RunID, &a.Agent, &a.Host, &a.Index, &a.Status, &lost, &a.Reason, &detail)
			if lost.Valid {
				a.LostAt = time.Unix(0, lost.Int64).UTC()
			}
			a.Detail = json.RawMessage(detail)
			return a, err
		})
}

// AgentInterval is one agent's statistics of one operation over one
// interval (the merged interval of the run has the same start).
type AgentInterval struct {
	Agent string
	Interval
}

// AddAgentIntervals writes one interval of one agent (all its operations)
// in one transaction.
func (s *Store) AddAgentIntervals(agent string, ivs []Interval) error {
	if len(ivs) == 0 {
		return nil
	}
	rows := make([][]any, len(ivs))
	for i, iv := range ivs {
		if iv.RunID <= 0 || agent == "" || iv.Phase == "" || iv.Op == "" || iv.Start.IsZero() {
			return fmt.Errorf("results database %s: agent interval %d of the batch lacks a run ID, agent, phase, op or start time", s.path, i)
		}
		enc, err := encodeHist(iv.Hist)
		if err != nil {
			return fmt.Errorf("results database %s: run %d agent %s %s %s: %w", s.path, iv.RunID, agent, iv.Phase, iv.Op, err)
		}
		var p99 any
		if sum := summarize(iv.Hist); sum.valid {
			p99 = sum.p99
		}
		rows[i] = []any{iv.RunID, agent, iv.Phase, iv.Op, iv.Start.UnixNano(), int64(iv.Duration), iv.Count, iv.Errors, iv.Late, iv.Dropped, p99, enc}
	}
	const doing = "writing an agent's intervals"
	return s.write(doing, agentDDL, func(tx *sql.Tx) error {
		ins, err := tx.Prepare(`INSERT OR REPLACE INTO agent_interval (run_id, agent, phase, op, start_ns, duration_ns, count, errors, late, dropped, p99_us, hist)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return s.fail(doing, err)
		}
		defer ins.Close()
		for _, r := range rows {
			if _, err := ins.Exec(r...); err != nil {
				return s.fail(doing, err)
			}
		}
		return nil
	})
}

// AgentIntervals returns a run's per-agent intervals (one agent's when
// agent is not ""), by start, agent, phase and operation; error kinds are
// kept only in the merged intervals.
func (s *Store) AgentIntervals(runID int64, agent string) ([]AgentInterval, error) {
	doing := fmt.Sprintf("reading the agents' intervals of run %d", runID)
	if ok, err := s.hasTable(doing, "agent_interval"); err != nil || !ok {
		return nil, err
	}
	type raw struct {
		a    AgentInterval
		hist string
	}
	rs, err := readAll(s, doing, `SELECT agent, phase, op, start_ns, duration_ns, count, errors, late, dropped, hist FROM agent_interval
		WHERE run_id = ?1 AND (?2 = '' OR agent = ?2) ORDER BY start_ns, agent, phase, op`, []any{runID, agent},
		func(rows *sql.Rows) (raw, error) {
			var r raw
			var start, dur int64
			err := rows.Scan(&r.a.Agent, &r.a.Phase, &r.a.Op, &start, &dur, &r.a.Count, &r.a.Errors, &r.a.Late, &r.a.Dropped, &r.hist)
			r.a.RunID, r.a.Start, r.a.Duration = runID, time.Unix(0, start).UTC(), time.Duration(dur)
			return r, err
		})
	if err != nil {
		return nil, err
	}
	out := make([]AgentInterval, len(rs))
	for i, r := range rs {
		if r.a.Hist, err = decodeHist(r.hist); err != nil {
			return nil, fmt.Errorf("results database %s: run %d agent %s %s %s: %w", s.path, runID, r.a.Agent, r.a.Phase, r.a.Op, err)
		}
		out[i] = r.a
	}
	return out, nil
}

// EachAgentInterval calls fn with each of run runID's agent interval rows
// of phase ("" = every phase), in the order AgentIntervals returns them,
// without holding them: each histogram is decoded into one reused
// histogram (as EachInterval does), valid only until fn returns, and
// Interval.MergeInto merges it from its non-zero buckets. A store from
// before load agents has no rows.
func (s *Store) EachAgentInterval(runID int64, phase string, fn func(*AgentInterval) error) error {
	doing := fmt.Sprintf("reading the agents' intervals of run %d", runID)
	if ok, err := s.hasTable(doing, "agent_interval"); err != nil || !ok {
		return err
	}
	rows, err := s.db.Query(`SELECT agent, phase, op, start_ns, duration_ns, count, errors, late, dropped, hist FROM agent_interval
		WHERE run_id = ?1 AND (?2 = '' OR phase = ?2) ORDER BY start_ns, agent, phase, op`, runID, phase)
	if err != nil {
		return s.fail(doing, err)
	}
	defer rows.Close()
	dec := newHdrDecoder()
	var hist string
	for rows.Next() {
		a := AgentInterval{Interval: Interval{RunID: runID}}
		var start, dur int64
		if err := rows.Scan(&a.Agent, &a.Phase, &a.Op, &start, &dur, &a.Count, &a.Errors, &a.Late, &a.Dropped, &hist); err != nil {
			return s.fail(doing, err)
		}
		a.Start, a.Duration = time.Unix(0, start).UTC(), time.Duration(dur)
		if a.Hist, err = dec.decode(hist); err != nil {
			return fmt.Errorf("results database %s: run %d agent %s %s %s: %w", s.path, runID, a.Agent, a.Phase, a.Op, err)
		}
		a.sparse = dec.pairs
		if err := fn(&a); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(doing, err)
	}
	return nil
}

// EncodeHistogram returns h in the encoding the store writes (HdrHistogram
// V2 compressed, base64): load agents send their intervals in it.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) { return encodeHist(h) }

// DecodeHistogram reads a histogram written by EncodeHistogram (or any
// HdrHistogram V2 encoder).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) { return decodeHist(s) }

package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Server-side timing (seed 001 §III-A: network delay = client response
// time minus the server's execution time, which the paper read from
// MySQL's per-statement profiler).
//
// performance_schema.events_statements_summary_by_digest keeps, per
// database and statement digest, the number of executions (COUNT_STAR) and
// their summed time (SUM_TIMER_WAIT, picoseconds), from the moment the
// server parsed the statement to the moment it sent the last result
// packet. A digest is a hash of the statement's tokens with literals
// replaced by ?, so all executions of one statement text with different
// arguments share it.
//
// Two facts of MariaDB 10.11 shape how Headroom uses it:
//   - executions of server-side prepared statements (COM_STMT_EXECUTE) are
//     not recorded under any digest, and prepared_statements_instances
//     leaves COUNT_EXECUTE at 0; so timing needs interpolate_params: true,
//     which sends every statement as text;
//   - there is no STATEMENT_DIGEST() function to compute a text's digest,
//     so Prepare learns each statement's digest by running it once, inside
//     a transaction it rolls back, between two reads of the digest table,
//     on a connection of its own.

// timing maps the learnt digests to operation names.
type timing struct {
	roles map[string]digestRole
	ops   []string // operation names in report order
	query string   // the counter query, with the digests inlined
	err   error    // why the server cannot report, given by ServerTimes
}

// digestRole says what a digest's counters add to: an operation's time,
// and its calls when the statement runs once per operation (the COMMIT of
// a read-modify-write adds only time).
type digestRole struct {
	op    string
	calls bool
}

// probe is one statement to learn the digest of, with stand-in arguments
// of the types the clients send (digests do not depend on the values).
type probe struct {
	role   digestRole
	text   string
	args   []any
	commit bool // learn the digest of COMMIT instead
}

// ServerTimes implements target.ServerTimer: the cumulative executions and
// execution time of each operation's statements since the server started
// (or its statistics were reset). With server_timing: false it reports
// nothing.
func (t *Target) ServerTimes(ctx context.Context) ([]target.ServerTime, error) {
	if !t.opts.ServerTiming {
		return nil, nil
	}
	if !t.prepared {
		return nil, errors.New("mysql target: server timing is known after Prepare")
	}
	if t.timing.err != nil {
		return nil, t.timing.err
	}
	rows, err := t.admin.QueryContext(ctx, t.timing.query)
	if err != nil {
		return nil, fmt.Errorf("mysql target: reading performance_schema statement times: %w", err)
	}
	defer rows.Close()
	sums := make(map[string]*target.ServerTime, len(t.timing.ops))
	for rows.Next() {
		var digest string
		var count, wait uint64
		if err := rows.Scan(&digest, &count, &wait); err != nil {
			return nil, err
		}
		r, ok := t.timing.roles[digest]
		if !ok {
			continue
		}
		s := sums[r.op]
		if s == nil {
			s = &target.ServerTime{Op: r.op}
			sums[r.op] = s
		}
		if r.calls {
			s.Calls += int64(count)
		}
		s.Total += time.Duration(wait / 1000)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []target.ServerTime
	for _, op := range t.timing.ops {
		if s := sums[op]; s != nil && s.Calls > 0 {
			out = append(out, *s)
		}
	}
	return out, nil
}

// probes lists the statements the workload runs, by operation.
func (t *Target) probes() []probe {
	w := t.w
	var out []probe
	if w.IsStatements() {
		for i, st := range w.Statements {
			if st.Weight <= 0 {
				continue
			}
			args := make([]any, len(st.Params))
			for j, g := range st.Params {
				args[j] = standIn(g)
			}
			out = append(out, probe{role: digestRole{op: st.Name, calls: true}, text: t.ws[i].Text, args: args})
		}
		return out
	}
	set := t.ycsb.Set
	// add adds the statements of kind k the operation runs: the
	// every-field one, or every per-field one.
	add := func(op string, calls, allFields bool, k sqlycsb.Kind) {
		for f := -1; f < set.Fields; f++ {
			if (f < 0) != allFields {
				continue
			}
			i := set.Index(k, f)
			out = append(out, probe{role: digestRole{op, calls}, text: set.List[i].SQL, args: probeArgs(set.List[i], set.Fields)})
		}
	}
	for _, typ := range w.Ops() {
		name := w.OpName(typ)
		switch typ {
		case workload.Read:
			add(name, true, w.ReadAllFields, sqlycsb.Read)
		case workload.Scan:
			add(name, true, w.ReadAllFields, sqlycsb.Scan)
		case workload.Update:
			add(name, true, w.WriteAllFields, sqlycsb.Update)
		case workload.Insert:
			add(name, true, true, sqlycsb.Insert)
		case workload.ReadModifyWrite:
			add(name, true, w.WriteAllFields, sqlycsb.LockedRead)
			add(name, false, w.WriteAllFields, sqlycsb.LockedUpdate)
			// Only read-modify-write commits explicitly while a run
			// lasts; its COMMIT (the redo log flush) is server time too.
			out = append(out, probe{role: digestRole{name, false}, commit: true})
		}
	}
	return out
}

// probeArgs are stand-in arguments for statement s, of the types the
// clients send.
func probeArgs(s sqlycsb.Statement, fields int) []any {
	op := &workload.Op{Key: []byte("headroom-timing-probe"), Field: s.Field, ScanLength: 1, Values: make([][]byte, fields)}
	for i := range op.Values {
		op.Values[i] = []byte("x")
	}
	var a standIns
	sqlycsb.Bind(&a, s.Kind, op)
	return a
}

// standIns collects a statement's arguments as sqlycsb.Client binds them.
type standIns []any

func (a *standIns) Key(k []byte)   { *a = append(*a, string(k)) }
func (a *standIns) Value(v []byte) { *a = append(*a, v) }
func (a *standIns) Int(n int64)    { *a = append(*a, n) }

// standIn is an argument of the type a parameter generator draws.
func standIn(g workload.ParamGen) any {
	switch g.Kind {
	case workload.ParamChoice:
		return g.Choices[0]
	case workload.ParamString:
		return strings.Repeat("x", max(g.MinLen, 1))
	}
	if g.Prefix != "" {
		return fmt.Sprintf("%s%d", g.Prefix, g.Min)
	}
	return g.Min
}

// learnDigests finds the digest of every statement the workload runs. A
// failure is kept for ServerTimes to report; the workload runs regardless.
func (t *Target) learnDigests(ctx context.Context) timing {
	fail := func(format string, args ...any) timing {
		return timing{err: fmt.Errorf("mysql target: server_timing: "+format, args...)}
	}
	conn, err := t.admin.Conn(ctx)
	if err != nil {
		return fail("%v", err)
	}
	defer conn.Close()
	var on int
	if err := conn.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return fail("cannot read @@performance_schema: %v", err)
	}
	if on == 0 {
		return fail("the server's performance_schema is OFF, so it cannot report statement times; add performance_schema=ON under [mysqld] in its configuration and restart it, or set server_timing: false")
	}
	var enabled string
	err = conn.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'").Scan(&enabled)
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && (me.Number == 1142 || me.Number == 1044):
		return fail("user %s may not read performance_schema (%v); run GRANT SELECT ON performance_schema.* TO the user, or set server_timing: false", t.cfg.User, err)
	case err != nil:
		return fail("reading performance_schema.setup_consumers: %v", err)
	case enabled != "YES":
		return fail("performance_schema's statements_digest consumer is disabled; run UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'statements_digest' as an administrator, or set server_timing: false")
	}

	l := &learner{conn: conn}
	// What a probe adds besides its statement: the digest reads
	// themselves, START TRANSACTION and ROLLBACK (at least three digests;
	// wait for them all, as counts show up a moment late).
	var noise []string
	for try := 0; try < 20 && len(noise) < 3; try++ {
		got, err := l.changed(ctx, probe{}, nil)
		if err != nil {
			return fail("%v", err)
		}
		for _, d := range got {
			if !contains(noise, d) {
				noise = append(noise, d)
			}
		}
	}
	tm := timing{roles: map[string]digestRole{}}
	seen := map[string]bool{}
	var digests []string
	for _, p := range t.probes() {
		// A digest that grew on every attempt is the statement's; others
		// belong to whatever else ran meanwhile.
		var got []string
		for attempt := 0; attempt < 3; attempt++ {
			now, err := l.changed(ctx, p, noise)
			if err != nil {
				return fail("%v", err)
			}
			if attempt == 0 {
				got = now
			} else {
				got = intersect(got, now)
			}
			if len(got) <= 1 {
				break
			}
		}
		what := p.text
		if p.commit {
			what = "COMMIT"
		}
		switch {
		case len(got) == 0:
			return fail("running %q left no statement digest in performance_schema (its digest table may be full: see performance_schema_digests_size)", truncate(what))
		case len(got) > 1:
			return fail("other sessions kept running statements in database %s while Headroom learnt the digest of %q; run the campaign while the database is otherwise idle, or set server_timing: false", t.cfg.DBName, truncate(what))
		}
		d := got[0]
		if _, dup := tm.roles[d]; !dup {
			// Two statements with the same text share one digest; the
			// first one's operation reports them both.
			tm.roles[d] = p.role
			digests = append(digests, "'"+d+"'")
		}
		if !seen[p.role.op] {
			seen[p.role.op] = true
			tm.ops = append(tm.ops, p.role.op)
		}
	}
	if len(digests) == 0 {
		return fail("the workload runs no statements")
	}
	// Digests are hex, safe to inline; the list is fixed for the campaign.
	tm.query = "SELECT DIGEST, COUNT_STAR, SUM_TIMER_WAIT FROM performance_schema.events_statements_summary_by_digest " +
		"WHERE SCHEMA_NAME = DATABASE() AND DIGEST IN (" + strings.Join(digests, ", ") + ")"
	return tm
}

// learner runs probes on one connection.
type learner struct{ conn *sql.Conn }

// counts reads the execution count of every digest of the database.
func (l *learner) counts(ctx context.Context) (map[string]uint64, error) {
	rows, err := l.conn.QueryContext(ctx, "SELECT DIGEST, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = DATABASE() AND DIGEST IS NOT NULL")
	if err != nil {
		return nil, fmt.Errorf("reading performance_schema.events_statements_summary_by_digest: %w", err)
	}
	defer rows.Close()
	m := map[string]uint64{}
	for rows.Next() {
		var d string
		var n uint64
		if err := rows.Scan(&d, &n); err != nil {
			return nil, err
		}
		m[d] = n
	}
	return m, rows.Err()
}

// changed runs p in a transaction it rolls back (or commits, for the
// COMMIT probe, which has no statement) and returns the digests whose
// counts grew, leaving out those in skip.
func (l *learner) changed(ctx context.Context, p probe, skip []string) ([]string, error) {
	before, err := l.counts(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := l.conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if p.text != "" {
		// The statement's own error (say, a stand-in value of the wrong
		// type) does not matter: its digest is counted all the same.
		if rows, err := tx.QueryContext(ctx, p.text, p.args...); err == nil {
			rows.Close()
		} else if ctx.Err() != nil {
			tx.Rollback()
			return nil, ctx.Err()
		}
	}
	if p.commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		return nil, err
	}
	// The server adds a statement to the summary after it has answered
	// the client, so the new count may take a moment to show.
	var out []string
	for wait := 0; wait < 50; wait++ {
		after, err := l.counts(ctx)
		if err != nil {
			return nil, err
		}
		out = out[:0]
		for d, n := range after {
			if n > before[d] && !contains(skip, d) {
				out = append(out, d)
			}
		}
		if len(out) > 0 || skip == nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	return out, nil
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

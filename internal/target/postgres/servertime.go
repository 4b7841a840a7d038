package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/target"
)

// serverTimer reads the server's own execution time per operation from
// pg_stat_statements (seed-digest §2, 001 §III-A: network delay = client
// response time - server execution time).
//
// Rows are matched to operations by query identifier, which Prepare finds
// by asking EXPLAIN: of each statement prepared as the clients prepare it
// (prepared mode), or of each statement with sample literals inlined
// (simple mode). Query text with whitespace removed is the fallback for
// statements EXPLAIN cannot show.
// PostgreSQL keeps one row per user, database and query identifier; the
// timer adds up each row's growth, so its totals only rise even when rows
// are reset, evicted, or start anew in a restored database.
type serverTimer struct {
	ops   []string         // operation names, in first-seen order
	ids   map[int64]int    // query identifier -> index into ops
	texts map[string]int   // query text without whitespace -> index into ops
	last  map[rowKey]rowAt // previous reading of each row
	calls []int64
	total []float64 // milliseconds
	seen  []bool    // a server has a row of the operation

	unavailable error // why pg_stat_statements cannot be read; reported once
	reported    bool
}

type rowKey struct {
	node string // a cluster's node name ("" for a single server)
	db   uint32
	id   int64
}

type rowAt struct {
	calls int64
	ms    float64
}

func newServerTimer(ctx context.Context, pool *pgxpool.Pool, qs *querySet) *serverTimer {
	st := &serverTimer{ids: map[int64]int{}, texts: map[string]int{}, last: map[rowKey]rowAt{}}
	opIndex := map[string]int{}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		st.unavailable = err
		return st
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	if err := pc.Exec(ctx, "SELECT 1 FROM pg_stat_statements LIMIT 1").Close(); err != nil {
		st.unavailable = missingExtension(err)
		return st
	}
	for _, q := range qs.q {
		i, ok := opIndex[q.op]
		if !ok {
			i = len(st.ops)
			opIndex[q.op] = i
			st.ops = append(st.ops, q.op)
		}
		st.texts[squeeze(q.sql)] = i
		if !qs.simple {
			if id, ok := preparedID(ctx, pc, q); ok {
				st.ids[id] = i
			}
			continue
		}
		for _, hi := range []bool{false, true} {
			if id, ok := explainID(ctx, pc, q.sample(hi)); ok {
				st.ids[id] = i
			}
		}
	}
	st.seen = make([]bool, len(st.ops))
	st.calls = make([]int64, len(st.ops))
	st.total = make([]float64, len(st.ops))
	return st
}

// preparedID is the query identifier PostgreSQL gives statement q when it
// is prepared with unspecified parameter types, as the clients prepare it.
// Statements EXPLAIN cannot show (utility statements) have none.
func preparedID(ctx context.Context, pc *pgconn.PgConn, q query) (int64, bool) {
	if err := pc.Exec(ctx, "PREPARE headroom_probe AS "+q.sql).Close(); err != nil {
		return 0, false
	}
	defer func() { _ = pc.Exec(ctx, "DEALLOCATE headroom_probe").Close() }()
	args := ""
	if n := len(q.parts) - 1; n > 0 {
		args = "(" + strings.TrimSuffix(strings.Repeat("NULL,", n), ",") + ")"
	}
	return explainID(ctx, pc, "EXECUTE headroom_probe"+args)
}

// explainID is the query identifier EXPLAIN shows for sql, which it plans
// but does not run. Constants do not change an identifier, only their
// types do.
func explainID(ctx context.Context, pc *pgconn.PgConn, sql string) (int64, bool) {
	res, err := pc.Exec(ctx, "EXPLAIN (VERBOSE, FORMAT JSON) "+sql).ReadAll()
	if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
		return 0, false
	}
	var plan []struct {
		ID *int64 `json:"Query Identifier"`
	}
	if json.Unmarshal(res[0].Rows[0][0], &plan) != nil || len(plan) != 1 || plan[0].ID == nil {
		return 0, false
	}
	return *plan[0].ID, true
}

// squeeze removes whitespace and a trailing semicolon, so that texts
// compare whatever the spacing around inlined literals.
func squeeze(s string) string {
	return strings.TrimRight(strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s), ";")
}

func missingExtension(err error) error {
	return fmt.Errorf("server timing is off: pg_stat_statements cannot be read (%v); add shared_preload_libraries = 'pg_stat_statements' to postgresql.conf, restart the server, and run CREATE EXTENSION pg_stat_statements in the workload's database (or set server_timing: false)", err)
}

// read returns the cumulative calls and execution time per operation.
func (st *serverTimer) read(ctx context.Context, pool *pgxpool.Pool) ([]target.ServerTime, error) {
	if err := st.readNode(ctx, pool, ""); err != nil {
		return nil, err
	}
	return st.totals(), nil
}

// readNode adds the growth of one server's rows since its last reading;
// node names the server in a cluster, whose nodes each count the
// statements they ran themselves.
func (st *serverTimer) readNode(ctx context.Context, pool *pgxpool.Pool, node string) error {
	if st.unavailable != nil {
		if st.reported {
			return nil
		}
		st.reported = true
		return st.unavailable
	}
	ids := make([]int64, 0, len(st.ids))
	for id := range st.ids {
		ids = append(ids, id)
	}
	texts := make([]string, 0, len(st.texts))
	for t := range st.texts {
		texts = append(texts, t)
	}
	rows, err := pool.Query(ctx, `SELECT dbid, queryid, calls, total_exec_time,
			regexp_replace(rtrim(query, E'; \t\r\n'), '\s+', '', 'g')
		FROM pg_stat_statements
		WHERE userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
		  AND (queryid = ANY($1) OR regexp_replace(rtrim(query, E'; \t\r\n'), '\s+', '', 'g') = ANY($2))`, ids, texts)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "42P01" || pe.Code == "55000") {
			st.unavailable, st.reported = missingExtension(err), true
		}
		return fmt.Errorf("postgres target: reading pg_stat_statements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		k := rowKey{node: node}
		var now rowAt
		var text string
		if err := rows.Scan(&k.db, &k.id, &now.calls, &now.ms, &text); err != nil {
			return fmt.Errorf("postgres target: reading pg_stat_statements: %w", err)
		}
		i, ok := st.ids[k.id]
		if !ok {
			if i, ok = st.texts[text]; !ok {
				continue
			}
		}
		prev := st.last[k]
		if now.calls < prev.calls || now.ms < prev.ms {
			prev = rowAt{} // the row was reset or evicted and started again
		}
		st.calls[i] += now.calls - prev.calls
		st.total[i] += now.ms - prev.ms
		st.last[k] = now
		st.seen[i] = true
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres target: reading pg_stat_statements: %w", err)
	}
	return nil
}

// totals are the operations' cumulative counts over every reading, of
// those the servers have seen.
func (st *serverTimer) totals() []target.ServerTime {
	var out []target.ServerTime
	for i, op := range st.ops {
		if st.seen[i] || st.calls[i] > 0 {
			out = append(out, target.ServerTime{Op: op, Calls: st.calls[i], Total: time.Duration(st.total[i] * float64(time.Millisecond))})
		}
	}
	return out
}

package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/headroom-dev/headroom/internal/target/sqlycsb"
	"github.com/headroom-dev/headroom/internal/workload"
)

// query is one statement the clients run.
type query struct {
	name  string   // prepared statement name on every connection
	sql   string   // with $1, $2, ... placeholders
	parts []string // the SQL split at its placeholders: len(parts) = params + 1
	op    string   // operation name for server-side timing
	// gens draw the parameters of a workload statement; for YCSB
	// statements, numeric marks the parameters that are numbers.
	gens    []workload.ParamGen
	numeric []bool
}

// querySet is every statement of one workload, indexed by position: for
// a YCSB workload, the positions of the statements in ycsb.List.
type querySet struct {
	q      []query
	simple bool // query_mode simple: literals inlined, simple protocol

	ycsb     *sqlycsb.Set // nil for a statement workload
	stmtBase int          // index of statement workload statement 0
	copySQL  string
}

// add appends a statement written with ? placeholders and returns its index.
func (qs *querySet) add(op, sql string) int {
	q := query{name: "hr_" + strconv.Itoa(len(qs.q)), op: op}
	last := 0
	workload.ScanPlaceholders(sql, func(pos int) {
		q.parts = append(q.parts, sql[last:pos])
		last = pos + 1
	})
	q.parts = append(q.parts, sql[last:])
	q.sql = sqlycsb.Postgres.Render(q.parts)
	qs.q = append(qs.q, q)
	return len(qs.q) - 1
}

// ycsbQueries are the YCSB statements (see sqlycsb), each timed as the
// operation of its kind; scans' second parameter is a number.
func ycsbQueries(tbl string, fields int) *querySet {
	set := sqlycsb.Postgres.Statements(tbl, fields)
	qs := &querySet{ycsb: set}
	for i, st := range set.List {
		q := query{name: "hr_" + strconv.Itoa(i), sql: st.SQL, parts: st.Parts, op: st.Kind.String()}
		if st.Kind == sqlycsb.Scan {
			q.numeric = []bool{false, true}
		}
		qs.q = append(qs.q, q)
	}
	qs.copySQL = "COPY " + tbl + " (" + set.Columns() + ") FROM STDIN"
	return qs
}

// statementQueries are the statements of a statement workload, in order.
func statementQueries(w workload.Config) *querySet {
	qs := &querySet{}
	for _, s := range w.Statements {
		i := qs.add(s.Name, strings.TrimRight(strings.TrimSpace(s.SQL), ";"))
		qs.q[i].gens = s.Params
	}
	return qs
}

// check prepares every statement once so that a mistake in the SQL (a
// missing table or column) stops the campaign before the first run,
// with the statement's name.
func (qs *querySet) check(ctx context.Context, pool *pgxpool.Pool) error {
	if qs.simple {
		return nil // literal SQL is only known per request
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres target: %w", err)
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	for _, q := range qs.q {
		if _, err := pc.Prepare(ctx, "", q.sql, nil); err != nil {
			return fmt.Errorf("postgres target: statement %s: %w (SQL: %s)", q.op, err, q.sql)
		}
	}
	return nil
}

// sample is statement q with representative parameter values inlined as
// the simple mode sends them: numbers at the low or (hi) high end of their
// range, since the size of a number decides its type (integer, bigint or
// numeric) and with it the query's identifier.
func (q query) sample(hi bool) string {
	var params [][]byte
	var isNum []bool
	for j := 0; j < len(q.parts)-1; j++ {
		text, num := "x", false
		switch {
		case j < len(q.gens):
			g := q.gens[j]
			switch g.Kind {
			case workload.ParamChoice:
				text = g.Choices[0]
			case workload.ParamString:
			default:
				v := g.Min
				if hi && g.Kind != workload.ParamSequence {
					v = g.Max
				}
				text, num = strconv.FormatInt(v, 10), g.Prefix == ""
				if !num {
					text = g.Prefix + text
				}
			}
		case j < len(q.numeric) && q.numeric[j]:
			text, num = "10", true
		}
		params = append(params, []byte(text))
		isNum = append(isNum, num)
	}
	return string(inline(nil, q.parts, params, isNum))
}

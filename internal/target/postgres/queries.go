package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

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

// querySet is every statement of one workload, indexed by position; the
// YCSB indexes say which is which.
type querySet struct {
	q      []query
	simple bool // query_mode simple: literals inlined, simple protocol

	readAll, updateAll, insert, scanAll int
	readOne, updateOne, scanOne         []int // per field
	fields                              int
	stmtBase                            int // index of statement workload statement 0
	copySQL                             string
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
	var b strings.Builder
	for i, p := range q.parts {
		if i > 0 {
			b.WriteString("$" + strconv.Itoa(i))
		}
		b.WriteString(p)
	}
	q.sql = b.String()
	qs.q = append(qs.q, q)
	return len(qs.q) - 1
}

// ycsbQueries are the YCSB statements of YCSB's JDBC binding: the whole
// record or one field, by primary key; scans in key order.
func ycsbQueries(tbl string, fields int) *querySet {
	qs := &querySet{fields: fields}
	names := make([]string, fields)
	sets := make([]string, fields)
	marks := make([]string, fields+1)
	for i := range names {
		names[i] = fmt.Sprintf("field%d", i)
		sets[i] = names[i] + " = ?"
		marks[i] = "?"
	}
	marks[fields] = "?"
	all := strings.Join(names, ", ")
	qs.readAll = qs.add("read", fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = ?", all, tbl))
	qs.updateAll = qs.add("update", fmt.Sprintf("UPDATE %s SET %s WHERE ycsb_key = ?", tbl, strings.Join(sets, ", ")))
	qs.insert = qs.add("insert", fmt.Sprintf("INSERT INTO %s (ycsb_key, %s) VALUES (%s)", tbl, all, strings.Join(marks, ", ")))
	qs.scanAll = qs.add("scan", fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", all, tbl))
	qs.q[qs.scanAll].numeric = []bool{false, true}
	for _, n := range names {
		qs.readOne = append(qs.readOne, qs.add("read", fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key = ?", n, tbl)))
		qs.updateOne = append(qs.updateOne, qs.add("update", fmt.Sprintf("UPDATE %s SET %s = ? WHERE ycsb_key = ?", tbl, n)))
		i := qs.add("scan", fmt.Sprintf("SELECT %s FROM %s WHERE ycsb_key >= ? ORDER BY ycsb_key LIMIT ?", n, tbl))
		qs.q[i].numeric = []bool{false, true}
		qs.scanOne = append(qs.scanOne, i)
	}
	qs.copySQL = fmt.Sprintf("COPY %s (ycsb_key, %s) FROM STDIN", tbl, all)
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

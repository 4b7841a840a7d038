package sqlwork

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/headroom-dev/headroom/internal/workload"
)

// tableLoad describes the rows of one table to insert. Rows come from
// units: unit u yields its rows through gen (one row per unit for most
// tables; one order's lines for order_line), and every unit's rows depend
// only on the seed and u, so units can be generated in any order and in
// parallel.
type tableLoad struct {
	name  string
	cols  []string
	units int64
	rows  int64
	// rowBytes bounds the size of one row's values, so that a statement
	// of wide rows stays under maxInsertBytes.
	rowBytes int
	// newGen returns a generator for one worker (it may keep scratch
	// buffers): it appends the rows of unit u to out.
	newGen func() func(u int64, out *rowSink)
}

// rowSink collects rows into multi-row INSERT statements and flushes them
// as they fill up.
type rowSink struct {
	args  []any
	ncols int
	rows  int64 // rows flushed
	flush func(args []any, rows int) error
	err   error
}

// row returns the next row's argument slots to fill.
func (s *rowSink) row() []any {
	if len(s.args)+s.ncols > cap(s.args) {
		s.flushNow()
	}
	n := len(s.args)
	s.args = s.args[:n+s.ncols]
	return s.args[n:]
}

func (s *rowSink) flushNow() {
	if len(s.args) == 0 {
		return
	}
	n := len(s.args) / s.ncols
	if s.err == nil {
		s.err = s.flush(s.args, n)
		s.rows += int64(n)
	}
	clear(s.args)
	s.args = s.args[:0]
}

// maxParams is the most ? placeholders one statement may have:
// PostgreSQL's and MySQL's protocols count them in 16 bits, SQLite's
// SQLITE_MAX_VARIABLE_NUMBER is 32766 since 3.32.
func maxParams(d Dialect) int {
	if d == SQLite {
		return 32766
	}
	return 65535
}

// maxRowsPerInsert bounds the rows of one INSERT statement: past a few
// hundred rows, statements only get bigger, not faster.
const maxRowsPerInsert = 500

// maxInsertBytes bounds the values of one INSERT statement: MariaDB's
// default max_allowed_packet is 16 MiB, and huge statements only cost
// memory on both sides.
const maxInsertBytes = 4 << 20

// chunkRows is about how many rows one transaction inserts.
const chunkRows = 10000

// rowsPerInsert is how many rows of ncols columns and up to rowBytes
// bytes go in one INSERT.
func rowsPerInsert(d Dialect, ncols, rowBytes int) int {
	return max(1, min(maxRowsPerInsert, maxParams(d)/ncols, maxInsertBytes/max(rowBytes, 1)))
}

// insertSQL is a multi-row INSERT of rows rows into table.
func insertSQL(d Dialect, table string, cols []string, rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(") VALUES ")
	tuple := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	return Rebind(d, b.String())
}

// loadWorkers is how many transactions insert at once: SQLite has one
// writer, servers take several.
func loadWorkers(d Dialect) int {
	if d == SQLite {
		return 1
	}
	return 3
}

// progressMeter serialises progress reports from the loading workers.
type progressMeter struct {
	mu          sync.Mutex
	f           func(done, total int64)
	done, total int64
}

func (p *progressMeter) add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.f != nil {
		p.f(p.done, p.total)
	}
}

type chunk struct {
	table    int
	from, to int64 // units
}

// load inserts the rows of every table in chunks of about chunkRows rows,
// one transaction each, with loadWorkers(d) transactions in flight.
func load(ctx context.Context, db *sql.DB, d Dialect, loads []*tableLoad, pr *progressMeter) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan chunk)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	for w := 0; w < loadWorkers(d); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gens := make([]func(int64, *rowSink), len(loads))
			for c := range jobs {
				if ctx.Err() != nil {
					continue
				}
				tl := loads[c.table]
				if gens[c.table] == nil {
					gens[c.table] = tl.newGen()
				}
				n, err := loadChunk(ctx, db, d, tl, gens[c.table], c)
				if err != nil {
					fail(fmt.Errorf("workload.dataset: filling table %s: %w", tl.name, err))
					continue
				}
				pr.add(n)
			}
		}()
	}
feed:
	for i, tl := range loads {
		per := max(1, chunkRows*tl.units/max(tl.rows, 1))
		for u := int64(0); u < tl.units; u += per {
			select {
			case jobs <- chunk{table: i, from: u, to: min(u+per, tl.units)}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// loadChunk inserts the rows of units [c.from, c.to) in one transaction
// and returns how many rows it inserted.
func loadChunk(ctx context.Context, db *sql.DB, d Dialect, tl *tableLoad, gen func(int64, *rowSink), c chunk) (int64, error) {
	per := rowsPerInsert(d, len(tl.cols), tl.rowBytes)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	full, err := tx.PrepareContext(ctx, insertSQL(d, tl.name, tl.cols, per))
	if err != nil {
		return 0, err
	}
	defer full.Close()
	sink := &rowSink{args: make([]any, 0, per*len(tl.cols)), ncols: len(tl.cols)}
	sink.flush = func(args []any, rows int) error {
		if rows == per {
			_, err := full.ExecContext(ctx, args...)
			return err
		}
		_, err := tx.ExecContext(ctx, insertSQL(d, tl.name, tl.cols, rows), args...)
		return err
	}
	for u := c.from; u < c.to && sink.err == nil; u++ {
		gen(u, sink)
	}
	sink.flushNow()
	if sink.err != nil {
		return 0, sink.err
	}
	return sink.rows, tx.Commit()
}

// generatedLoad fills a table from column generators. Row i's value in
// column j is workload.NewColumnDrawer(gen, tableSeed, j).Draw(i): a
// function of the run's seed, the table's name, the column's position and
// the row number, so reruns with the same seed insert the same rows and two
// tables do not repeat each other's values.
func generatedLoad(t workload.TableGen, seed uint64) *tableLoad {
	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(t.Name)))
	tseed := seed ^ h.Sum64()
	cols := make([]string, len(t.Columns))
	size := 0
	for j, c := range t.Columns {
		cols[j] = c.Name
		size += valueBytes(c.Gen)
	}
	return &tableLoad{
		name: t.Name, cols: cols, units: t.Rows, rows: t.Rows, rowBytes: size,
		newGen: func() func(int64, *rowSink) {
			drawers := make([]*workload.ColumnDrawer, len(t.Columns))
			for j, c := range t.Columns {
				drawers[j] = workload.NewColumnDrawer(c.Gen, tseed, j)
			}
			var buf []byte
			return func(i int64, out *rowSink) {
				row := out.row()
				for j, dr := range drawers {
					p := dr.Draw(i, buf)
					if p.IsStr {
						row[j] = string(p.Str)
						buf = p.Str[:0]
					} else {
						row[j] = p.Int
					}
				}
			}
		},
	}
}

// valueBytes is the longest value a generator draws.
func valueBytes(g workload.ParamGen) int {
	switch {
	case g.Kind == workload.ParamString:
		return g.MaxLen
	case g.Kind == workload.ParamChoice:
		n := 0
		for _, c := range g.Choices {
			n = max(n, len(c))
		}
		return n
	case g.Prefix != "":
		return len(g.Prefix) + 20
	}
	return 8
}

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

var subjects = []string{
	"ARTS", "BIOGRAPHIES", "BUSINESS", "CHILDREN", "COMPUTERS", "COOKING", "HEALTH", "HISTORY",
	"HOME", "HUMOR", "LITERATURE", "MYSTERY", "NON-FICTION", "PARENTING", "POLITICS", "REFERENCE",
	"RELIGION", "ROMANCE", "SELF-HELP", "SCIENCE-NATURE", "SCIENCE-FICTION", "SPORTS", "YOUTH", "TRAVEL",
}

// tpcwWorkload is seed 001's three statements (§II-E) on a small tpcw data set.
func tpcwWorkload() (workload.Config, map[string]int64) {
	ds := workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 300, "ebs": 1}}
	n := sqlwork.TPCWCounts(ds.Scale)
	return workload.Config{Dataset: ds, Statements: []workload.Statement{
		{Name: "simple_join", Weight: 1, SQL: `SELECT * FROM customer, address, country
WHERE customer.c_addr_id = address.addr_id AND address.addr_co_id = country.co_id AND customer.c_uname = ?`,
			Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 1, Max: n["customer"], Prefix: "UN"}}},
		{Name: "complex_join", Weight: 1, SQL: `SELECT i_id, i_title, a_fname, a_lname FROM item, author
WHERE item.i_a_id = author.a_id AND item.i_subject = ? ORDER BY item.i_pub_date DESC, item.i_title LIMIT 50`,
			Params: []workload.ParamGen{{Kind: workload.ParamChoice, Choices: subjects}}},
		{Name: "insert_line", Weight: 1, SQL: `INSERT INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments) VALUES (?, ?, ?, ?, ?, ?)`,
			Params: []workload.ParamGen{
				{Kind: workload.ParamSequence, Min: 6},
				{Kind: workload.ParamUniform, Min: 1, Max: n["orders"]},
				{Kind: workload.ParamUniform, Min: 1, Max: n["item"]},
				{Kind: workload.ParamUniform, Min: 1, Max: 300},
				{Kind: workload.ParamChoice, Choices: []string{"0.00", "0.01"}},
				{Kind: workload.ParamString, MinLen: 20, MaxLen: 100},
			}},
	}}, n
}

func rows(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStatementWorkload(t *testing.T) {
	opts := *defaultOptions()
	opts.BusyTimeout = spec.Duration{Duration: 50 * time.Millisecond}
	tgt, err := Open(opts, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	ctx := context.Background()
	cfg, counts := tpcwWorkload()
	if err := tgt.Prepare(ctx, cfg, true); err != nil {
		t.Fatal(err)
	}
	if n := rows(t, tgt.db, "customer"); n != 0 {
		t.Fatalf("fresh prepare left %d customers", n)
	}
	var dl target.DatasetLoader = tgt
	var done, total int64
	if err := dl.LoadDataset(ctx, cfg, 1, func(d, tt int64) { done, total = d, tt }); err != nil {
		t.Fatal(err)
	}
	var all int64
	for table, n := range counts {
		if got := rows(t, tgt.db, table); got != n {
			t.Fatalf("%s has %d rows, want %d", table, got, n)
		}
		all += n
	}
	if done != all || total != all {
		t.Fatalf("progress %d/%d, want %d", done, total, all)
	}
	var exists int
	if tgt.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'usertable'").Scan(&exists); exists != 0 {
		t.Fatal("a statement workload created the YCSB table")
	}

	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(target.Loader); ok {
		t.Fatal("a statement client must not offer YCSB batch loading")
	}
	gen, err := workload.New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	op := gen.NewOp()
	ran := map[string]int{}
	for i := 0; i < 300; i++ {
		gen.Next(op)
		if err := c.Do(ctx, op); err != nil {
			t.Fatalf("%s %v: %v", cfg.OpName(op.Type), op.Params, err)
		}
		ran[cfg.OpName(op.Type)]++
	}
	if len(ran) != 3 {
		t.Fatalf("ran %v", ran)
	}
	if got := rows(t, tgt.db, "order_line"); got != counts["order_line"]+int64(ran["insert_line"]) {
		t.Fatalf("order_line has %d rows after %d inserts", got, ran["insert_line"])
	}

	// A second prepare without fresh keeps the data; a statement that
	// inserts an existing key is a constraint error.
	dup := cfg
	dup.Statements = append([]workload.Statement(nil), cfg.Statements...)
	dup.Statements[2].Params = append([]workload.ParamGen(nil), cfg.Statements[2].Params...)
	dup.Statements[2].Params[0] = workload.ParamGen{Kind: workload.ParamUniform, Min: 1, Max: 1}
	dup.Statements[0].Weight, dup.Statements[1].Weight = 0, 0
	if err := tgt.Prepare(ctx, dup, false); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, tgt.db, "item"); got != counts["item"] {
		t.Fatalf("prepare without fresh left %d items", got)
	}
	c, _ = tgt.NewClient(ctx)
	gen, _ = workload.New(dup, 1)
	op = gen.NewOp()
	gen.Next(op)
	var ke target.Kinder
	if err := c.Do(ctx, op); !errors.As(err, &ke) || ke.Kind() != target.KindConstraint {
		t.Fatalf("duplicate order line: %v", err)
	}

	// A writer holding the lock makes the insert wait busy_timeout, then
	// fail as busy.
	other, err := sql.Open("sqlite", "file:"+tgt.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	dup.Statements[2].Params[0] = workload.ParamGen{Kind: workload.ParamSequence, Min: 1000}
	gen, _ = workload.New(dup, 1)
	gen.Next(op)
	err = c.Do(ctx, op)
	conn.ExecContext(ctx, "ROLLBACK")
	conn.Close()
	if !errors.As(err, &ke) || ke.Kind() != target.KindBusy {
		t.Fatalf("insert under another writer's lock: %v", err)
	}

	// A cancelled context comes back as the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Do(cctx, op); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	// A YCSB operation is not a statement of this workload.
	op.Type = workload.Read
	if err := c.Do(ctx, op); err == nil || !strings.Contains(err.Error(), "not a statement") {
		t.Fatalf("YCSB op on a statement client: %v", err)
	}
}

func TestStatementPrepareErrors(t *testing.T) {
	tgt, err := Open(*defaultOptions(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	ctx := context.Background()
	cfg, _ := tpcwWorkload()
	cfg.Statements = append(cfg.Statements, workload.Statement{Name: "typo", Weight: 1, SQL: "SELECT nope FROM item"})
	err = tgt.Prepare(ctx, cfg, true)
	if err == nil || !strings.Contains(err.Error(), "workload.statements[3] (typo)") || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("bad statement: %v", err)
	}
	if _, err := tgt.NewClient(ctx); err == nil {
		t.Fatal("a failed prepare must not leave clients to open")
	}
	cfg.Dataset = workload.Dataset{Builtin: "tpcc"}
	if err := tgt.Prepare(ctx, cfg, true); err == nil || !strings.Contains(err.Error(), "workload.dataset.builtin") {
		t.Fatalf("unknown data set: %v", err)
	}
	// The same target still runs YCSB afterwards.
	ycsb, _ := workload.Preset("a")
	ycsb.RecordCount = 10
	if err := tgt.Prepare(ctx, ycsb, true); err != nil {
		t.Fatal(err)
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(target.Loader); !ok {
		t.Fatal("YCSB client lost LoadBatch")
	}
}

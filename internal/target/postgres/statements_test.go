package postgres

import (
	"context"
	"testing"

	"github.com/headroom-dev/headroom/internal/sqlwork"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// tpcwWorkload is seed 001's statement workload (§II-E) on a tiny tpcw
// data set.
func tpcwWorkload() workload.Config {
	ds := workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 100, "ebs": 1}}
	n := sqlwork.TPCWCounts(ds.Scale)
	return workload.Config{Dataset: ds, Statements: []workload.Statement{
		{Name: "simple_join", Weight: 1, SQL: `SELECT * FROM customer, address, country
WHERE customer.c_addr_id = address.addr_id AND address.addr_co_id = country.co_id
AND customer.c_uname = ?`,
			Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 1, Max: n["customer"], Prefix: "UN"}}},
		{Name: "complex_join", Weight: 1, SQL: `SELECT i_id, i_title, a_fname, a_lname, i_pub_date FROM item, author
WHERE item.i_a_id = author.a_id AND item.i_subject = ?
ORDER BY item.i_pub_date DESC, item.i_title LIMIT 50`,
			Params: []workload.ParamGen{{Kind: workload.ParamChoice, Choices: []string{"ARTS", "HISTORY", "TRAVEL"}}}},
		{Name: "insert_line", Weight: 1, SQL: `INSERT INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments)
VALUES (?, ?, ?, ?, ?, ?);`,
			Params: []workload.ParamGen{
				{Kind: workload.ParamSequence, Min: 6},
				{Kind: workload.ParamUniform, Min: 1, Max: n["orders"]},
				{Kind: workload.ParamUniform, Min: 1, Max: n["item"]},
				{Kind: workload.ParamUniform, Min: 1, Max: 300},
				{Kind: workload.ParamUniform, Min: 0, Max: 0},
				{Kind: workload.ParamString, MinLen: 20, MaxLen: 100},
			}},
	}}
}

func TestTPCWStatementWorkload(t *testing.T) {
	for _, mode := range []string{"prepared", "simple"} {
		t.Run(mode, func(t *testing.T) {
			tg := openShared(t, func(o *Options) { o.QueryMode = mode })
			cfg := tpcwWorkload()
			ctx := context.Background()
			if err := tg.Prepare(ctx, cfg, true); err != nil {
				t.Fatal(err)
			}
			var last int64
			if err := tg.LoadDataset(ctx, cfg, 1, func(done, total int64) { last = done }); err != nil {
				t.Fatal(err)
			}
			counts := sqlwork.TPCWCounts(cfg.Dataset.Scale)
			for _, tbl := range []string{"customer", "item", "order_line"} {
				if n := count(t, tg, tbl); n != counts[tbl] {
					t.Fatalf("%s: %d rows, want %d", tbl, n, counts[tbl])
				}
			}
			if last == 0 {
				t.Fatal("LoadDataset reported no progress")
			}
			before := timesByOp(t, tg)
			g, err := workload.New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := tg.NewClient(ctx)
			op := g.NewOp()
			ran := map[string]int64{}
			for i := 0; i < 60; i++ {
				g.Next(op)
				if err := c.Do(ctx, op); err != nil {
					t.Fatalf("%s: %v", cfg.OpName(op.Type), err)
				}
				ran[cfg.OpName(op.Type)]++
			}
			if n := count(t, tg, "order_line"); n != counts["order_line"]+ran["insert_line"] {
				t.Fatalf("order_line has %d rows after %d inserts, want %d", n, ran["insert_line"], counts["order_line"]+ran["insert_line"])
			}
			// simple_join finds exactly the customer it names.
			rows, _, err := c.(*client).execOn(ctx, tg, func(cl *client) { cl.addText([]byte("UN7")) }, 0)
			if err != nil || rows != 1 {
				t.Fatalf("simple_join of UN7: %d rows, %v", rows, err)
			}
			after := timesByOp(t, tg)
			for name, n := range ran {
				if d := after[name].Calls - before[name].Calls; d < n || d > n+1 {
					t.Errorf("%s: server counted %d calls, client ran %d", name, d, n)
				}
			}
			// A fresh Prepare empties the tables again.
			if err := tg.Prepare(ctx, cfg, true); err != nil || count(t, tg, "customer") != 0 {
				t.Fatalf("fresh Prepare must empty the data set: %v", err)
			}
			var _ target.DatasetLoader = tg
		})
	}
}

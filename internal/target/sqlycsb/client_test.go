package sqlycsb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// open returns a client of d's statements on a fresh SQLite database with
// YCSB's table of two fields.
func open(t *testing.T, d *Dialect) (*Client, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, d.CreateTable("usertable", 2)); err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(ctx, db, d.Statements("usertable", 2), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return NewClient(p), db
}

func record(key string, values ...string) *workload.Op {
	op := &workload.Op{Type: workload.Insert, Key: []byte(key), Field: -1}
	for _, v := range values {
		op.Values = append(op.Values, []byte(v))
	}
	return op
}

func TestClientOperations(t *testing.T) {
	ctx := context.Background()
	c, db := open(t, SQLite)
	if err := c.LoadBatch(ctx, []*workload.Op{record("a", "a0", "a1"), record("b", "b0", "b1"), record("c", "c0", "c1")}); err != nil {
		t.Fatal(err)
	}

	op := record("b", "", "")
	op.Type = workload.Read
	if err := c.Do(ctx, op); err != nil || string(c.Row()[0]) != "b0" || string(c.Row()[1]) != "b1" {
		t.Errorf("read b = %q, %v", c.Row(), err)
	}
	op.Field = 1
	if err := c.Do(ctx, op); err != nil || string(c.Row()[0]) != "b1" {
		t.Errorf("read b's field1 = %q, %v", c.Row()[0], err)
	}

	op = record("c", "", "new")
	op.Type, op.Field = workload.Update, 1
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	var f0, f1 string
	if err := db.QueryRow("SELECT field0, field1 FROM usertable WHERE ycsb_key = ?", []byte("c")).Scan(&f0, &f1); err != nil || f0 != "c0" || f1 != "new" {
		t.Errorf("after updating field1 of c: %q %q, %v", f0, f1, err)
	}

	op = record("a", "", "")
	op.Type, op.Field, op.ScanLength = workload.Scan, 0, 2
	if err := c.Do(ctx, op); err != nil || string(c.Row()[0]) != "b0" {
		t.Errorf("scan of 2 from a ended at %q, %v; want b0", c.Row()[0], err)
	}

	op = record("b", "rmw0", "rmw1")
	op.Type = workload.ReadModifyWrite
	if err := c.Do(ctx, op); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT field0, field1 FROM usertable WHERE ycsb_key = ?", []byte("b")).Scan(&f0, &f1); err != nil || f0 != "rmw0" || f1 != "rmw1" {
		t.Errorf("after read-modify-write of b: %q %q, %v", f0, f1, err)
	}

	// A missing record is not found by reads, updates and
	// read-modify-writes; the last leaves no transaction open.
	for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.ReadModifyWrite} {
		op := record("zz", "x", "y")
		op.Type = typ
		if err := c.Do(ctx, op); !errors.Is(err, target.ErrNotFound) {
			t.Errorf("%v of a missing record: %v, want not found", typ, err)
		}
	}
	if c.tx != nil {
		t.Error("a failed read-modify-write left its transaction on the client")
	}
	op = record("d", "d0", "d1")
	if err := c.Do(ctx, op); err != nil {
		t.Fatalf("insert after a failed read-modify-write: %v", err)
	}
	if err := c.Do(ctx, op); err == nil {
		t.Error("inserting an existing key succeeded")
	}
	op.Type = workload.NumOpTypes
	if err := c.Do(ctx, op); err == nil {
		t.Error("an operation of no YCSB type ran")
	}
}

// Multi-row INSERTs split a batch at the dialect's parameter limit, and
// a failing batch stores none of its records.
func TestLoadBatchMultiRow(t *testing.T) {
	ctx := context.Background()
	d := *SQLite
	d.MaxBatchParams, d.MaxBatchBytes = 7, 1<<20 // two records of 3 parameters per INSERT
	c, db := open(t, &d)
	var ops []*workload.Op
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		ops = append(ops, record(k, k+"-0", k+"-1"))
	}
	if err := c.LoadBatch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if c.batchRows != 1 {
		t.Errorf("the last INSERT held %d records, want 1 (5 = 2 + 2 + 1)", c.batchRows)
	}
	var n int
	var v string
	if err := db.QueryRow("SELECT count(*), max(field1) FROM usertable").Scan(&n, &v); err != nil || n != 5 || v != "k5-1" {
		t.Errorf("after loading 5 records: %d, %q, %v", n, v, err)
	}
	if err := c.LoadBatch(ctx, []*workload.Op{record("k6", "a", "b"), record("k1", "c", "d")}); err == nil {
		t.Error("a batch with an existing key loaded")
	}
	if err := db.QueryRow("SELECT count(*) FROM usertable").Scan(&n); err != nil || n != 5 {
		t.Errorf("after a failed batch the table holds %d records, %v; want 5", n, err)
	}
}

package sqlwork

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/headroom-dev/headroom/internal/workload"
)

// openSQLite opens a database file in a temporary directory.
func openSQLite(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	t.Cleanup(func() { db.Close() })
	return db
}

func countRows(t *testing.T, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	return n
}

// checksum hashes every value of a table in key order.
func checksum(t *testing.T, db *sql.DB, table, key string) uint64 {
	t.Helper()
	rows, err := db.Query("SELECT * FROM " + table + " ORDER BY " + key)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	raw := make([]sql.RawBytes, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	h := fnv.New64a()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		for _, v := range raw {
			h.Write(v)
			h.Write([]byte{0})
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return h.Sum64()
}

// seedStatements are the three statements of seed 001 §II-E, for a tpcw
// data set of the given counts.
func seedStatements(n map[string]int64) []workload.Statement {
	return []workload.Statement{
		{Name: "simple_join", Weight: 1, SQL: `SELECT * FROM customer, address, country
WHERE customer.c_addr_id = address.addr_id AND address.addr_co_id = country.co_id
AND customer.c_uname = ?`,
			Params: []workload.ParamGen{{Kind: workload.ParamUniform, Min: 1, Max: n["customer"], Prefix: "UN"}}},
		{Name: "complex_join", Weight: 1, SQL: `SELECT i_id, i_title, a_fname, a_lname, i_pub_date FROM item, author
WHERE item.i_a_id = author.a_id AND item.i_subject = ?
ORDER BY item.i_pub_date DESC, item.i_title LIMIT 50`,
			Params: []workload.ParamGen{{Kind: workload.ParamChoice, Choices: tpcwSubjects}}},
		{Name: "insert_line", Weight: 1, SQL: `INSERT INTO order_line (ol_id, ol_o_id, ol_i_id, ol_qty, ol_discount, ol_comments)
VALUES (?, ?, ?, ?, ?, ?)`,
			Params: []workload.ParamGen{
				{Kind: workload.ParamSequence, Min: 6},
				{Kind: workload.ParamUniform, Min: 1, Max: n["orders"]},
				{Kind: workload.ParamUniform, Min: 1, Max: n["item"]},
				{Kind: workload.ParamUniform, Min: 1, Max: 300},
				{Kind: workload.ParamUniform, Min: 0, Max: 0},
				{Kind: workload.ParamString, MinLen: 20, MaxLen: 100},
			}},
	}
}

func TestTPCWOnSQLite(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	ds := workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 1200, "ebs": 1}}
	if err := Setup(ctx, db, SQLite, ds, true); err != nil {
		t.Fatal(err)
	}
	var calls int
	var done, total int64
	err := Populate(ctx, db, SQLite, ds, 7, func(d, tot int64) {
		if d < done || (calls > 0 && tot != total) {
			t.Errorf("progress went from %d/%d to %d/%d", done, total, d, tot)
		}
		calls++
		done, total = d, tot
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := TPCWCounts(ds.Scale)
	var all int64
	for table, n := range counts {
		if got := countRows(t, db, table); got != n {
			t.Errorf("%s has %d rows, want %d", table, got, n)
		}
		all += n
	}
	if calls < 3 || done != all || total != all {
		t.Fatalf("progress: %d calls, last %d/%d, want %d rows", calls, done, total, all)
	}

	// The documented value rules statements rely on.
	var n int64
	db.QueryRow("SELECT count(*) FROM customer WHERE c_uname = 'UN' || c_id AND c_passwd = 'un' || c_id").Scan(&n)
	if n != counts["customer"] {
		t.Fatalf("%d of %d customers follow c_uname = UN || c_id", n, counts["customer"])
	}
	db.QueryRow("SELECT count(*) FROM item WHERE i_subject IN ('" + strings.Join(tpcwSubjects, "','") + "')").Scan(&n)
	if n != counts["item"] {
		t.Fatalf("%d items have a TPC-W subject", n)
	}
	db.QueryRow("SELECT count(*) FROM customer c JOIN address a ON c.c_addr_id = a.addr_id JOIN country co ON a.addr_co_id = co.co_id").Scan(&n)
	if n != counts["customer"] {
		t.Fatalf("%d customers join to an address and a country", n)
	}
	db.QueryRow("SELECT count(DISTINCT i_a_id) FROM item").Scan(&n)
	if n != counts["author"] {
		t.Fatalf("items name %d distinct authors, want every one of %d", n, counts["author"])
	}
	db.QueryRow("SELECT count(*) FROM orders o WHERE (SELECT count(*) FROM order_line WHERE ol_o_id = o.o_id) = 1 + (o.o_id - 1) % 5").Scan(&n)
	if n != counts["orders"] {
		t.Fatalf("%d orders have 1 + (o_id-1) mod 5 lines", n)
	}

	// The seed's statements, drawn as a run draws them.
	cfg := workload.Config{Statements: seedStatements(counts), Dataset: ds}
	gen, err := workload.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	op := gen.NewOp()
	var args []any
	ran := map[string]int{}
	over50 := false
	for i := 0; i < 300; i++ {
		gen.Next(op)
		st := cfg.Statements[workload.StatementOf(op.Type)]
		args = AppendArgs(args, op.Params)
		q := Rebind(SQLite, st.SQL)
		ran[st.Name]++
		if !IsQuery(q) {
			res, err := db.ExecContext(ctx, q, args...)
			if err != nil {
				t.Fatalf("%s %v: %v", st.Name, args, err)
			}
			if k, _ := res.RowsAffected(); k != 1 {
				t.Fatalf("%s inserted %d rows", st.Name, k)
			}
			continue
		}
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		cols, _ := rows.Columns()
		raw := make([]sql.RawBytes, len(cols))
		dest := make([]any, len(cols))
		for i := range raw {
			dest[i] = &raw[i]
		}
		got, prevDate := 0, "9999"
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				t.Fatal(err)
			}
			got++
			switch st.Name {
			case "simple_join":
				if string(raw[1]) != args[0] {
					t.Fatalf("looked up %v, got c_uname %s", args[0], raw[1])
				}
			case "complex_join":
				if d := string(raw[4]); d > prevDate {
					t.Fatalf("result not sorted by i_pub_date desc: %s after %s", d, prevDate)
				} else {
					prevDate = d
				}
			}
		}
		rows.Close()
		want := int64(1)
		if st.Name == "complex_join" {
			db.QueryRow("SELECT count(*) FROM item WHERE i_subject = ?", args[0]).Scan(&want)
			over50 = over50 || want > 50
			want = min(want, 50)
		}
		if int64(got) != want {
			t.Fatalf("%s %v returned %d rows, want %d", st.Name, args, got, want)
		}
	}
	if len(ran) != 3 || !over50 {
		t.Fatalf("statements run: %v; a subject with more than 50 items seen: %v", ran, over50)
	}
	if got := countRows(t, db, "order_line"); got != counts["order_line"]+int64(ran["insert_line"]) {
		t.Fatalf("order_line has %d rows after %d inserts", got, ran["insert_line"])
	}

	// Setup without fresh keeps the data; with fresh it starts over.
	if err := Setup(ctx, db, SQLite, ds, false); err != nil || countRows(t, db, "item") != counts["item"] {
		t.Fatalf("setup without fresh: %v", err)
	}
	if _, err := db.Exec("DROP TABLE author"); err != nil {
		t.Fatal(err)
	}
	if err := Setup(ctx, db, SQLite, ds, false); err != nil || countRows(t, db, "author") != 0 || countRows(t, db, "item") != counts["item"] {
		t.Fatalf("setup without fresh must recreate only the missing table: %v", err)
	}
	if err := Setup(ctx, db, SQLite, ds, true); err != nil {
		t.Fatal(err)
	}
	for table := range counts {
		if got := countRows(t, db, table); got != 0 {
			t.Errorf("after a fresh setup %s has %d rows", table, got)
		}
	}
	// The indexes came back with the tables.
	db.QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('customer_c_uname', 'item_i_subject', 'item_i_a_id')").Scan(&n)
	if n != 3 {
		t.Fatalf("%d of the 3 indexes exist", n)
	}
}

func TestTPCWReproducible(t *testing.T) {
	ctx := context.Background()
	ds := workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 100, "ebs": 1}}
	sums := map[uint64][]uint64{}
	for _, seed := range []uint64{11, 11, 12} {
		db := openSQLite(t)
		if err := Setup(ctx, db, SQLite, ds, true); err != nil {
			t.Fatal(err)
		}
		if err := Populate(ctx, db, SQLite, ds, seed, nil); err != nil {
			t.Fatal(err)
		}
		sums[seed] = append(sums[seed], checksum(t, db, "customer", "c_id"), checksum(t, db, "order_line", "ol_o_id, ol_id"), checksum(t, db, "item", "i_id"))
	}
	if fmt.Sprint(sums[11][:3]) != fmt.Sprint(sums[11][3:]) {
		t.Fatalf("same seed, different data: %v", sums[11])
	}
	for i := range sums[12] {
		if sums[12][i] == sums[11][i] {
			t.Fatalf("seeds 11 and 12 gave the same table %d", i)
		}
	}
}

func scriptDataset() workload.Dataset {
	return workload.Dataset{
		SchemaFile:   filepath.Join("testdata", "schema.sql"),
		PopulateFile: filepath.Join("testdata", "populate.sql"),
		Tables: []workload.TableGen{{Name: "kv", Rows: 700, Columns: []workload.ColumnGen{
			{Name: "id", Gen: workload.ParamGen{Kind: workload.ParamSequence, Min: 1}},
			{Name: "name", Gen: workload.ParamGen{Kind: workload.ParamString, MinLen: 5, MaxLen: 12}},
			{Name: "score", Gen: workload.ParamGen{Kind: workload.ParamZipfian, Min: 1, Max: 100}},
			{Name: "tag", Gen: workload.ParamGen{Kind: workload.ParamChoice, Choices: []string{"red", "green", "blue"}}},
			{Name: "code", Gen: workload.ParamGen{Kind: workload.ParamUniform, Min: 1, Max: 50, Prefix: "C-"}},
		}}},
	}
}

func TestScriptsAndGeneratedTables(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	ds := scriptDataset()
	tables, err := Tables(ds)
	if err != nil || strings.Join(tables, ",") != "kv,Event Log" {
		t.Fatalf("Tables: %q %v", tables, err)
	}
	if err := Setup(ctx, db, SQLite, ds, true); err != nil {
		t.Fatal(err)
	}
	var last, total int64
	if err := Populate(ctx, db, SQLite, ds, 5, func(d, tot int64) { last, total = d, tot }); err != nil {
		t.Fatal(err)
	}
	if last != 702 || total != 702 {
		t.Fatalf("progress ended at %d/%d, want 702 (2 script statements + 700 rows)", last, total)
	}
	if n := countRows(t, db, "kv"); n != 700 {
		t.Fatalf("kv has %d rows", n)
	}
	// Two script rows plus the one the trigger adds for kv id 1.
	if n := countRows(t, db, `"Event Log"`); n != 3 {
		t.Fatalf("Event Log has %d rows", n)
	}
	var note string
	db.QueryRow(`SELECT note FROM "Event Log" WHERE id = 100`).Scan(&note)
	if note != "it's; loaded" {
		t.Fatalf("script row note %q", note)
	}
	var minID, maxID, badName, badScore, badTag, badCode, distinctScores, ones int64
	db.QueryRow(`SELECT min(id), max(id),
		sum(length(name) NOT BETWEEN 5 AND 12),
		sum(score NOT BETWEEN 1 AND 100 OR typeof(score) != 'integer'),
		sum(tag NOT IN ('red', 'green', 'blue')),
		sum(code NOT GLOB 'C-[0-9]*' OR CAST(substr(code, 3) AS INTEGER) NOT BETWEEN 1 AND 50),
		count(DISTINCT score), sum(score = 1)
		FROM kv`).Scan(&minID, &maxID, &badName, &badScore, &badTag, &badCode, &distinctScores, &ones)
	if minID != 1 || maxID != 700 || badName+badScore+badTag+badCode != 0 {
		t.Fatalf("kv values: ids %d..%d, bad name %d score %d tag %d code %d", minID, maxID, badName, badScore, badTag, badCode)
	}
	// Zipfian: 1 is the most popular score, by far.
	if distinctScores < 10 || ones < 700/10 {
		t.Fatalf("zipfian scores: %d distinct, %d ones", distinctScores, ones)
	}
	sum := checksum(t, db, "kv", "id")

	// Without fresh, a schema whose tables all exist is not run again.
	if err := Setup(ctx, db, SQLite, ds, false); err != nil || countRows(t, db, "kv") != 700 {
		t.Fatalf("setup without fresh: %v", err)
	}
	// A missing table makes it run (its statements say IF NOT EXISTS).
	db.Exec(`DROP TABLE "Event Log"`)
	if err := Setup(ctx, db, SQLite, ds, false); err != nil || countRows(t, db, `"Event Log"`) != 0 || countRows(t, db, "kv") != 700 {
		t.Fatalf("setup with a missing table: %v", err)
	}
	// Fresh drops both and the same seed fills the same rows again.
	if err := Setup(ctx, db, SQLite, ds, true); err != nil || countRows(t, db, "kv") != 0 {
		t.Fatalf("fresh setup: %v", err)
	}
	if err := Populate(ctx, db, SQLite, ds, 5, nil); err != nil {
		t.Fatal(err)
	}
	if checksum(t, db, "kv", "id") != sum {
		t.Fatal("same seed, different generated rows")
	}
}

func TestWideGeneratedTableUsesPlaceholderLimit(t *testing.T) {
	// SQLite's limit of 32766 placeholders in one statement is what
	// rowsPerInsert relies on.
	db := openSQLite(t)
	marks := strings.TrimSuffix(strings.Repeat("(?),", maxParams(SQLite)), ",")
	args := make([]any, maxParams(SQLite))
	for i := range args {
		args[i] = int64(i)
	}
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM (VALUES "+marks+")", args...).Scan(&n); err != nil || n != int64(len(args)) {
		t.Fatalf("%d placeholders: %v (%d)", len(args), err, n)
	}
	if _, err := db.Exec("SELECT ?"+strings.Repeat(", ?", maxParams(SQLite)), append(args, int64(0))...); err == nil {
		t.Log("this SQLite build accepts more than 32766 placeholders")
	}

	dir := t.TempDir()
	cols := make([]string, 70)
	gens := make([]workload.ColumnGen, 70)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d INTEGER", i)
		gens[i] = workload.ColumnGen{Name: fmt.Sprintf("c%d", i), Gen: workload.ParamGen{Kind: workload.ParamSequence, Min: int64(i)}}
	}
	schema := filepath.Join(dir, "wide.sql")
	writeFile(t, schema, "CREATE TABLE wide ("+strings.Join(cols, ", ")+");")
	ds := workload.Dataset{SchemaFile: schema, Tables: []workload.TableGen{{Name: "wide", Rows: 1200, Columns: gens}}}
	if per := rowsPerInsert(SQLite, 70, 70*8); per*70 > maxParams(SQLite) || per < 400 {
		t.Fatalf("rows per insert %d", per)
	}
	// Long text values make for fewer rows per statement.
	if per := rowsPerInsert(Postgres, 2, 1<<20+8); per != 3 {
		t.Fatalf("rows of 1 MiB per insert: %d", per)
	}
	ctx := context.Background()
	if err := Setup(ctx, db, SQLite, ds, true); err != nil {
		t.Fatal(err)
	}
	if err := Populate(ctx, db, SQLite, ds, 1, nil); err != nil {
		t.Fatal(err)
	}
	var s int64
	db.QueryRow("SELECT sum(c69 - c0) FROM wide").Scan(&s)
	if countRows(t, db, "wide") != 1200 || s != 1200*69 {
		t.Fatalf("wide table: sum %d", s)
	}
}

func TestScriptErrors(t *testing.T) {
	db := openSQLite(t)
	ctx := context.Background()
	bad := filepath.Join("testdata", "bad.sql")
	err := Setup(ctx, db, SQLite, workload.Dataset{SchemaFile: bad}, true)
	if err == nil || !strings.HasPrefix(err.Error(), "workload.dataset.schema: "+bad+" line 4: ") {
		t.Fatalf("error %v, want one naming %s line 4", err, bad)
	}
	// The schema runs statement by statement: what came before the error stays.
	if !exists(ctx, db, "ok1") {
		t.Fatal("the statement before the error did not run")
	}
	db.Exec("DROP TABLE ok1")
	ds := scriptDataset()
	ds.Tables[0].Name = "kvs"
	err = Setup(ctx, db, SQLite, ds, true)
	if err == nil || !strings.HasPrefix(err.Error(), "workload.dataset.tables[0].name: \"kvs\" is not a table") {
		t.Fatalf("unknown generated table: %v", err)
	}
	ds = scriptDataset()
	ds.PopulateFile = bad
	if err := Setup(ctx, db, SQLite, ds, true); err != nil {
		t.Fatal(err)
	}
	err = Populate(ctx, db, SQLite, ds, 1, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "workload.dataset.populate: "+bad+" line 4: ") {
		t.Fatalf("populate error %v", err)
	}
	// A populate error is not partly applied: the script ran in a transaction.
	if exists(ctx, db, "ok1") {
		t.Fatal("the failed populate script's first statement was committed")
	}
	// Duplicate rows fail with the table's name.
	ds.PopulateFile = ""
	if err := Populate(ctx, db, SQLite, ds, 1, nil); err != nil {
		t.Fatal(err)
	}
	err = Populate(ctx, db, SQLite, ds, 1, nil)
	if err == nil || !strings.Contains(err.Error(), "filling table kv") || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("second populate: %v", err)
	}
	// A built-in data set takes no schema of its own.
	err = Setup(ctx, db, SQLite, workload.Dataset{Builtin: "tpcw", SchemaFile: bad}, true)
	if err == nil || !strings.HasPrefix(err.Error(), "workload.dataset: builtin replaces") {
		t.Fatalf("builtin with a schema: %v", err)
	}
	// A cancelled context stops population.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = Populate(cctx, db, SQLite, workload.Dataset{Builtin: "tpcw", Scale: map[string]int64{"items": 10, "ebs": 1}}, 1, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled populate: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

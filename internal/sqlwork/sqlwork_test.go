package sqlwork

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

func TestRebind(t *testing.T) {
	q := "SELECT '?', \"?\", `?` FROM t -- ?\nWHERE a = ? /* ? */ AND b = 'it''s ?' AND c=?"
	want := "SELECT '?', \"?\", `?` FROM t -- ?\nWHERE a = $1 /* ? */ AND b = 'it''s ?' AND c=$2"
	if got := Rebind(Postgres, q); got != want {
		t.Fatalf("Rebind(Postgres):\n got %q\nwant %q", got, want)
	}
	for _, d := range []Dialect{SQLite, MySQL} {
		if got := Rebind(d, q); got != q {
			t.Fatalf("Rebind(%v) changed the query: %q", d, got)
		}
	}
	if got := Rebind(Postgres, "SELECT 1"); got != "SELECT 1" {
		t.Fatalf("no placeholders: %q", got)
	}
	// Many parameters: numbers keep counting past one digit.
	marks := strings.TrimSuffix(strings.Repeat("?,", 120), ",")
	got := Rebind(Postgres, "VALUES ("+marks+")")
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, "VALUES ("), ")"), ",")
	if len(parts) != 120 {
		t.Fatalf("got %d parameters", len(parts))
	}
	for i, p := range parts {
		if p != fmt.Sprintf("$%d", i+1) {
			t.Fatalf("parameter %d is %q", i, p)
		}
	}
}

func TestAppendArgs(t *testing.T) {
	params := []workload.Param{{Int: 42}, {Str: []byte("UN7"), IsStr: true, Int: 7}, {Int: -1}}
	dst := make([]any, 0, 8)
	dst = append(dst, "stale", "stale", "stale", "stale")
	got := AppendArgs(dst, params)
	want := []any{int64(42), "UN7", int64(-1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
	if &got[0] != &dst[:1][0] {
		t.Fatal("AppendArgs did not reuse dst")
	}
	// The string is a copy: the Op may overwrite its buffer afterwards.
	params[1].Str[0] = 'X'
	if got[1] != "UN7" {
		t.Fatalf("argument aliases the parameter buffer: %q", got[1])
	}
	if n := len(AppendArgs(got, nil)); n != 0 {
		t.Fatalf("no params gave %d args", n)
	}
}

func TestIsQuery(t *testing.T) {
	cases := map[string]bool{
		"SELECT 1":          true,
		"  select * from t": true,
		"-- why\n/* x */ (SELECT 1) UNION (SELECT 2)": true,
		"WITH a AS (SELECT 1) SELECT * FROM a":        true,
		"VALUES (1), (2)":                             true,
		"SHOW TABLES":                                 true,
		"EXPLAIN SELECT 1":                            true,
		"TABLE t":                                     true,
		"PRAGMA table_info(t)":                        true,
		"INSERT INTO t VALUES (1) RETURNING id":       true,
		"INSERT INTO t VALUES (?)":                    false,
		"insert ignore into t values (1)":             false,
		"UPDATE t SET a = 'RETURNING' WHERE b = ?":    false,
		"DELETE FROM t -- RETURNING\n":                false,
		"CREATE TABLE selections (a int)":             false,
		"":                                            false,
		"/* SELECT */ UPDATE t SET a = 1":             false,
	}
	for q, want := range cases {
		if got := IsQuery(q); got != want {
			t.Errorf("IsQuery(%q) = %v, want %v", q, got, want)
		}
	}
}

func stmtsOf(s []scriptStmt) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.SQL
	}
	return out
}

func TestSplitScript(t *testing.T) {
	cases := []struct {
		name  string
		d     Dialect
		src   string
		want  []string
		lines []int
	}{
		{"plain", SQLite, "SELECT 1;SELECT 2;;\n\nSELECT 3", []string{"SELECT 1", "SELECT 2", "SELECT 3"}, []int{1, 1, 3}},
		{"quotes", SQLite, "SELECT ';', \"a;b\", `c;`, [d;e];\nSELECT 'it''s; fine';",
			[]string{"SELECT ';', \"a;b\", `c;`, [d;e]", "SELECT 'it''s; fine'"}, []int{1, 2}},
		{"comments", SQLite, "-- one; two\n/* three;\n four */ SELECT 1; -- tail;\n\nSELECT /* ; */ 2;\n-- only a comment;\n",
			[]string{"SELECT 1", "SELECT /* ; */ 2"}, []int{3, 5}},
		{"dollar quotes", Postgres,
			"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;\nDO $body$ BEGIN PERFORM 1; END $body$;\nSELECT $1::int, a$b$c FROM t;",
			[]string{"CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql", "DO $body$ BEGIN PERFORM 1; END $body$", "SELECT $1::int, a$b$c FROM t"},
			[]int{1, 2, 3}},
		{"nested comments", Postgres, "/* a /* b; */ c; */ SELECT 1;\nSELECT E'x\\';y';", []string{"SELECT 1", "SELECT E'x\\';y'"}, []int{1, 2}},
		{"postgres backslash is literal", Postgres, "SELECT 'C:\\';SELECT 2", []string{"SELECT 'C:\\'", "SELECT 2"}, []int{1, 1}},
		{"mysql escapes and hints", MySQL,
			"/*!40101 SET NAMES utf8mb4 */;\n# a comment; here\nINSERT INTO t VALUES ('it\\'s;', \"q\\\";\");\nSELECT 5--3;",
			[]string{"/*!40101 SET NAMES utf8mb4 */", "INSERT INTO t VALUES ('it\\'s;', \"q\\\";\")", "SELECT 5--3"}, []int{1, 3, 4}},
		{"mysql delimiter", MySQL,
			"DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END//\nDELIMITER $$\nCREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END$$\ndelimiter ;\nSELECT 3;",
			[]string{"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END", "SELECT 3"},
			[]int{2, 4, 6}},
		{"sqlite trigger", SQLite,
			"CREATE TEMP TRIGGER tr AFTER INSERT ON t WHEN CASE WHEN new.a > 0 THEN 1 END BEGIN\n UPDATE t SET b = 1; DELETE FROM u;\nEND;\nBEGIN;\nSELECT 1;\nCOMMIT;",
			[]string{"CREATE TEMP TRIGGER tr AFTER INSERT ON t WHEN CASE WHEN new.a > 0 THEN 1 END BEGIN\n UPDATE t SET b = 1; DELETE FROM u;\nEND", "BEGIN", "SELECT 1", "COMMIT"},
			[]int{1, 4, 5, 6}},
		{"empty", Postgres, "  -- nothing\n/* at all */\n", nil, nil},
	}
	for _, c := range cases {
		got, err := splitScript(c.src, c.d)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(stmtsOf(got), c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, stmtsOf(got), c.want)
			continue
		}
		for i, s := range got {
			if s.Line != c.lines[i] {
				t.Errorf("%s: statement %d starts on line %d, want %d", c.name, i, s.Line, c.lines[i])
			}
		}
	}
	errs := []struct {
		d        Dialect
		src      string
		contains string
	}{
		{SQLite, "SELECT 1;\nSELECT 'open;\n", "line 2: quoted text"},
		{Postgres, "SELECT 1;\n\nSELECT $x$ never closed", "line 3: dollar-quoted"},
		{Postgres, "SELECT 1;\n/* open", "line 2: comment"},
		{Postgres, "\\connect other\nSELECT 1;", "line 1: \\connect is a psql meta-command"},
		{MySQL, "DELIMITER\nSELECT 1;", "line 1: DELIMITER needs"},
	}
	for _, e := range errs {
		_, err := splitScript(e.src, e.d)
		if err == nil || !strings.Contains(err.Error(), e.contains) {
			t.Errorf("%q: got error %v, want one containing %q", e.src, err, e.contains)
		}
	}
}

func TestCreatedTables(t *testing.T) {
	cases := []struct {
		d         Dialect
		sql       string
		name, ref string
	}{
		{SQLite, "CREATE TABLE t (x int)", "t", "t"},
		{Postgres, "create table if not exists \"Order Line\"(x int)", "Order Line", "\"Order Line\""},
		{MySQL, "CREATE TEMPORARY TABLE IF NOT EXISTS `shop`.`items` (x int)", "shop.items", "`shop`.`items`"},
		{Postgres, "CREATE UNLOGGED TABLE public.x AS SELECT 1", "public.x", "public.x"},
		{Postgres, "CREATE GLOBAL TEMPORARY TABLE g (x int)", "g", "g"},
		{MySQL, "CREATE OR REPLACE TABLE r (x int)", "r", "r"},
		{SQLite, "/* lead */ CREATE VIRTUAL TABLE [my docs] USING fts5(body)", "my docs", "[my docs]"},
		{SQLite, "CREATE TABLE main.\"a\"\"b\" (x)", "main.a\"b", "main.\"a\"\"b\""},
	}
	for _, c := range cases {
		got, ok := createdTable(c.sql, c.d)
		if !ok || got.name != c.name || got.ref != c.ref {
			t.Errorf("%q: got %+v %v, want name %q ref %q", c.sql, got, ok, c.name, c.ref)
		}
	}
	for _, q := range []string{"CREATE INDEX i ON t (x)", "CREATE VIEW v AS SELECT 1", "INSERT INTO t VALUES (1)", "CREATE TABLE", "CREATE TABLE IF EXISTS t (x)", "DROP TABLE t"} {
		if got, ok := createdTable(q, Postgres); ok {
			t.Errorf("%q: reported table %+v", q, got)
		}
	}
	stmts, _ := splitScript("CREATE TABLE a (x);\nCREATE TABLE IF NOT EXISTS A (x);\nCREATE INDEX ai ON a (x);\nCREATE TABLE b (y);", SQLite)
	refs := createdTables(stmts, SQLite)
	if len(refs) != 2 || refs[0].name != "a" || refs[1].name != "b" {
		t.Fatalf("createdTables: %+v", refs)
	}
}

func TestTablesBuiltinAndErrors(t *testing.T) {
	got, err := Tables(workload.Dataset{Builtin: "tpcw"})
	want := []string{"country", "author", "item", "customer", "address", "orders", "order_line"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("tpcw tables: %v %v", got, err)
	}
	if _, err := Tables(workload.Dataset{Builtin: "tpcc"}); err == nil || !strings.HasPrefix(err.Error(), "workload.dataset.builtin:") {
		t.Fatalf("unknown builtin: %v", err)
	}
	if _, err := Tables(workload.Dataset{}); err == nil || !strings.HasPrefix(err.Error(), "workload.dataset.schema:") {
		t.Fatalf("no schema: %v", err)
	}
	if _, err := Tables(workload.Dataset{SchemaFile: "/nonexistent/schema.sql"}); err == nil || !strings.Contains(err.Error(), "cannot read") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestTPCWCounts(t *testing.T) {
	n := TPCWCounts(nil)
	want := map[string]int64{"country": 92, "author": 2500, "item": 10000, "customer": 288000,
		"address": 576000, "orders": 259200, "order_line": 777600}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("default counts %v", n)
	}
	n = TPCWCounts(map[string]int64{"items": 200, "ebs": 1})
	// 2592 orders: 518 full cycles of 1..5 lines plus orders with 1 and 2 lines.
	if n["customer"] != 2880 || n["address"] != 5760 || n["orders"] != 2592 || n["order_line"] != 518*15+3 || n["author"] != 50 {
		t.Fatalf("small counts %v", n)
	}
	var sum int64
	for o := int64(1); o <= 2592; o++ {
		sum += linesOf(o)
	}
	if sum != n["order_line"] {
		t.Fatalf("orderLines %d, summed %d", n["order_line"], sum)
	}
}

func TestMoneyAndDates(t *testing.T) {
	if s := string(appendMoney(nil, 1234)); s != "12.34" {
		t.Fatal(s)
	}
	if s := string(appendMoney(nil, 5)); s != "0.05" {
		t.Fatal(s)
	}
	if s := string(appendDate(nil, daysFrom(1930, 1, 1))); s != "1930-01-01" {
		t.Fatal(s)
	}
	if s := string(appendTimestamp(nil, tpcwNow+3661)); s != "2024-01-01 01:01:01" {
		t.Fatal(s)
	}
	r := rowRand(1, 2, 3)
	for i := 0; i < 1000; i++ {
		b := r.text(nil, 3, 7)
		if len(b) < 3 || len(b) > 7 || strings.Trim(string(b), alnum) != "" {
			t.Fatalf("text %q", b)
		}
		if v := r.between(-2, 2); v < -2 || v > 2 {
			t.Fatalf("between %d", v)
		}
	}
}

// FuzzScript checks that no script text makes the SQL readers panic, and
// that splitting keeps every statement's text inside the script.
func FuzzScript(f *testing.F) {
	for _, s := range []string{
		"SELECT 1; SELECT ';'", "CREATE TABLE \"a\"\"b\".c (x);", "$$;$$ $a$ $1 E'\\'' /* /* */ */",
		"DELIMITER //\nSELECT 1//", "CREATE TRIGGER t BEGIN SELECT 1; END;", "/*! x */; # c\n`a;`", "[x;", "\\c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, d := range []Dialect{SQLite, Postgres, MySQL} {
			stmts, err := splitScript(src, d)
			if err == nil {
				for _, s := range stmts {
					if s.SQL == "" || !strings.Contains(src, s.SQL) || s.Line < 1 {
						t.Fatalf("%v: bad statement %+v of %q", d, s, src)
					}
				}
				createdTables(stmts, d)
			}
			createdTable(src, d)
		}
		IsQuery(src)
		if n, m := workload.CountPlaceholders(src), strings.Count(Rebind(Postgres, src), "$"); m < n {
			t.Fatalf("Rebind lost placeholders: %d ? but %d $", n, m)
		}
	})
}

package spec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

const stmtBase = "name: t\ntarget: {type: fake}\nload: {model: open, rates: [10]}\n"

// The seed 001 statements as a Headroom statement workload: they parse into
// the generator's form with every parameter generator and the dataset.
func TestStatementWorkloadParses(t *testing.T) {
	src := stmtBase + `workload:
  statements:
    - name: simple_join
      weight: 2
      sql: SELECT * FROM customer, address WHERE c_addr_id = addr_id AND c_uname = ?
      params: [{uniform: [1, 2880], prefix: UN}]
    - name: complex_join
      sql: SELECT i_id FROM item WHERE i_subject = ? ORDER BY i_pub_date DESC LIMIT 50
      params: [{choice: [ARTS, HISTORY]}]
    - name: insert_line
      weight: 0.5
      sql: INSERT INTO order_line VALUES (?, ?, ?, '?')
      params: [{sequence: 100}, {zipfian: [1, 1000]}, {string: [5, 10]}]
  dataset: {builtin: tpcw, scale: {items: 1000, ebs: 1}}
slo: {percentile: 99, threshold: 50ms, operation: complex_join}
`
	s := mustParse(t, src)
	stmts, ds, err := s.Workload.StatementWorkload("/specs")
	if err != nil {
		t.Fatal(err)
	}
	want := []workload.Statement{
		{Name: "simple_join", Weight: 2, SQL: "SELECT * FROM customer, address WHERE c_addr_id = addr_id AND c_uname = ?",
			Params: []workload.ParamGen{{Kind: "uniform", Min: 1, Max: 2880, Prefix: "UN"}}},
		{Name: "complex_join", Weight: 1, SQL: "SELECT i_id FROM item WHERE i_subject = ? ORDER BY i_pub_date DESC LIMIT 50",
			Params: []workload.ParamGen{{Kind: "choice", Choices: []string{"ARTS", "HISTORY"}}}},
		{Name: "insert_line", Weight: 0.5, SQL: "INSERT INTO order_line VALUES (?, ?, ?, '?')",
			Params: []workload.ParamGen{{Kind: "sequence", Min: 100}, {Kind: "zipfian", Min: 1, Max: 1000}, {Kind: "string", MinLen: 5, MaxLen: 10}}},
	}
	if !reflect.DeepEqual(stmts, want) {
		t.Errorf("statements =\n%+v\nwant\n%+v", stmts, want)
	}
	if ds.Builtin != "tpcw" || ds.Scale["items"] != 1000 || ds.Scale["ebs"] != 1 {
		t.Errorf("dataset = %+v", ds)
	}
}

func TestStatementScriptPathsAreRelativeToTheSpec(t *testing.T) {
	src := stmtBase + `workload:
  statements: [{name: q, sql: "SELECT 1"}]
  dataset:
    schema: sql/schema.sql
    populate: /abs/data.sql
    tables: [{name: t, rows: 5, columns: [{name: id, sequence: 1}, {name: v, string: [8]}]}]
`
	s := mustParse(t, src)
	_, ds, err := s.Workload.StatementWorkload("/specs")
	if err != nil {
		t.Fatal(err)
	}
	if ds.SchemaFile != "/specs/sql/schema.sql" || ds.PopulateFile != "/abs/data.sql" {
		t.Errorf("script paths = %q, %q", ds.SchemaFile, ds.PopulateFile)
	}
	if len(ds.Tables) != 1 || len(ds.Tables[0].Columns) != 2 || ds.Tables[0].Columns[1].Gen.MaxLen != 8 {
		t.Errorf("tables = %+v", ds.Tables)
	}
}

func TestStatementErrors(t *testing.T) {
	tests := []struct{ name, workload, want string }{
		{"placeholder count", `{statements: [{name: q, sql: "SELECT ? + ?", params: [{uniform: [1, 2]}]}], dataset: {builtin: tpcw}}`,
			`workload.statements[0].params: the SQL has 2 ? placeholder(s) but 1 param(s) are given`},
		{"two generators", `{statements: [{name: q, sql: "SELECT ?", params: [{uniform: [1, 2], choice: [a]}]}], dataset: {builtin: tpcw}}`,
			`workload.statements[0].params[0]: give exactly one generator`},
		{"bad range", `{statements: [{name: q, sql: "SELECT ?", params: [{zipfian: [5, 1]}]}], dataset: {builtin: tpcw}}`,
			`workload.statements[0].params[0]: zipfian: min 5 is above max 1`},
		{"one bound", `{statements: [{name: q, sql: "SELECT ?", params: [{uniform: [5]}]}], dataset: {builtin: tpcw}}`,
			`workload.statements[0].params[0]: uniform: give [min, max], got 1 value(s)`},
		{"duplicate name", `{statements: [{name: q, sql: "SELECT 1"}, {name: q, sql: "SELECT 2"}], dataset: {builtin: tpcw}}`,
			`workload.statements[1].name: "q" is used twice`},
		{"ycsb name", `{statements: [{name: read, sql: "SELECT 1"}], dataset: {builtin: tpcw}}`,
			`workload.statements[0].name: "read" is a YCSB operation name`},
		{"both kinds", `{ycsb: a, statements: [{name: q, sql: "SELECT 1"}], dataset: {builtin: tpcw}}`,
			`workload.statements: a workload is either YCSB records`},
		{"no dataset", `{statements: [{name: q, sql: "SELECT 1"}]}`,
			`workload.dataset: required with statements`},
		{"unknown builtin", `{statements: [{name: q, sql: "SELECT 1"}], dataset: {builtin: tpcc}}`,
			`workload.dataset.builtin: unknown data set "tpcc"`},
		{"bad scale", `{statements: [{name: q, sql: "SELECT 1"}], dataset: {builtin: tpcw, scale: {customers: 5}}}`,
			`workload.dataset.scale.customers: unknown tpcw scale parameter`},
		{"zero weights", `{statements: [{name: q, weight: 0, sql: "SELECT 1"}], dataset: {builtin: tpcw}}`,
			`workload.statements: every weight is 0`},
		{"column without name", `{statements: [{name: q, sql: "SELECT 1"}], dataset: {schema: s.sql, tables: [{name: t, rows: 1, columns: [{sequence: 1}]}]}}`,
			`workload.dataset.tables[0].columns[0].name: required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := parseErrors(t, stmtBase+"workload: "+tt.workload+"\n")
			found := false
			for _, l := range lines {
				found = found || strings.Contains(l, tt.want)
			}
			if !found {
				t.Errorf("no error contains\n  %s\ngot:\n  %s", tt.want, strings.Join(lines, "\n  "))
			}
		})
	}
}

// An SLO on a statement workload names a statement, not a YCSB operation.
func TestSLOOperationNamesAStatement(t *testing.T) {
	src := stmtBase + "workload: {statements: [{name: q, sql: \"SELECT 1\"}], dataset: {builtin: tpcw}}\nslo: {percentile: 99, threshold: 1s, operation: read}\n"
	lines := parseErrors(t, src)
	if len(lines) != 1 || !strings.Contains(lines[0], `slo.operation: unknown operation "read"`) {
		t.Errorf("got %q", lines)
	}
}

package store

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

type colKind int

const (
	kInt colKind = iota
	kFloat
	kText
	kBool
	kJSON // JSON text: embedded as a value in json, as text in csv
)

type exportCol struct {
	name     string
	expr     string
	kind     colKind
	jsonOnly bool // too bulky or opaque for a spreadsheet (the histogram)
}

type exportTable struct {
	cols []exportCol
	from string // FROM ... ORDER BY ...
}

// plain is a column exported as stored.
func plain(name string, kind colKind) exportCol { return exportCol{name: name, expr: name, kind: kind} }

var runExportCols = []exportCol{
	plain("id", kInt), plain("seq", kInt), plain("slot", kInt), plain("treatment", kText), plain("model", kText),
	plain("level_index", kInt), plain("level", kFloat), plain("repetition", kInt),
	plain("start_ns", kInt), plain("end_ns", kInt), plain("status", kText), plain("message", kText),
	plain("sent", kInt), plain("completed", kInt), plain("errors", kInt), plain("late", kInt), plain("dropped", kInt),
	plain("unfinished", kInt), plain("measure_start_ns", kInt), plain("measure_end_ns", kInt), plain("measure_secs", kFloat), plain("throughput", kFloat),
	plain("client_cpu_pct", kFloat), plain("client_limited", kBool), plain("client_note", kText),
}

// exportTables defines each export as a query. Intervals carry the run
// fields an analysis groups by, so one file is enough for a pivot table.
var exportTables = map[string]exportTable{
	"campaign": {
		cols: []exportCol{plain("name", kText), plain("spec_file", kText), plain("spec_yaml", kText), plain("seed", kInt),
			plain("host_json", kJSON), plain("tool_version", kText), plain("created_at", kText), plain("created_ns", kInt)},
		from: `FROM campaign`,
	},
	"runs": {cols: runExportCols, from: `FROM run ORDER BY id`},
	"intervals": {
		cols: []exportCol{
			{name: "run_id", expr: "i.run_id", kind: kInt},
			{name: "seq", expr: "r.seq", kind: kInt},
			{name: "slot", expr: "r.slot", kind: kInt},
			{name: "treatment", expr: "r.treatment", kind: kText},
			{name: "model", expr: "r.model", kind: kText},
			{name: "level_index", expr: "r.level_index", kind: kInt},
			{name: "level", expr: "r.level", kind: kFloat},
			{name: "repetition", expr: "r.repetition", kind: kInt},
			{name: "run_status", expr: "r.status", kind: kText},
			{name: "phase", expr: "i.phase", kind: kText},
			{name: "op", expr: "i.op", kind: kText},
			{name: "start_ns", expr: "i.start_ns", kind: kInt},
			{name: "elapsed_secs", expr: "(i.start_ns - r.start_ns) / 1e9", kind: kFloat},
			{name: "duration_ns", expr: "i.duration_ns", kind: kInt},
			{name: "count", expr: "i.count", kind: kInt},
			{name: "errors", expr: "i.errors", kind: kInt},
			{name: "late", expr: "i.late", kind: kInt},
			{name: "dropped", expr: "i.dropped", kind: kInt},
			{name: "throughput", expr: "CASE WHEN i.duration_ns > 0 THEN i.count * 1e9 / i.duration_ns END", kind: kFloat},
			{name: "mean_us", expr: "i.mean_us", kind: kFloat},
			{name: "p50_us", expr: "i.p50_us", kind: kInt},
			{name: "p90_us", expr: "i.p90_us", kind: kInt},
			{name: "p95_us", expr: "i.p95_us", kind: kInt},
			{name: "p99_us", expr: "i.p99_us", kind: kInt},
			{name: "p999_us", expr: "i.p999_us", kind: kInt},
			{name: "max_us", expr: "i.max_us", kind: kInt},
			{name: "error_kinds", kind: kJSON, expr: `(SELECT json_group_object(e.kind, e.count) FROM interval_error e
				WHERE e.run_id = i.run_id AND e.phase = i.phase AND e.op = i.op AND e.start_ns = i.start_ns)`},
			{name: "hist", expr: "i.hist", kind: kText, jsonOnly: true},
		},
		from: `FROM interval i JOIN run r ON r.id = i.run_id ORDER BY i.run_id, i.start_ns, i.op, i.phase`,
	},
	"events": {
		cols: []exportCol{plain("id", kInt), plain("run_id", kInt), plain("time_ns", kInt), plain("kind", kText), plain("detail", kText)},
		from: `FROM event ORDER BY time_ns, id`,
	},
	"samples": {
		cols: []exportCol{plain("run_id", kInt), plain("host", kText), plain("resource", kText), plain("metric", kText),
			plain("start_ns", kInt), plain("period_ns", kInt), plain("value", kFloat), plain("source", kText)},
		from: `FROM sample ORDER BY host, resource, metric, start_ns`,
	},
	"server_times": {
		cols: []exportCol{plain("run_id", kInt), plain("op", kText), plain("start_ns", kInt), plain("duration_ns", kInt),
			plain("calls", kInt), plain("exec_ns", kInt),
			{name: "exec_mean_us", expr: "CASE WHEN calls > 0 THEN exec_ns / 1e3 / calls END", kind: kFloat}},
		from: `FROM server_time ORDER BY run_id, op, start_ns`,
	},
}

// ExportTables lists the tables Export accepts.
func ExportTables() []string {
	return append([]string{"campaign", "runs", "intervals", "events", "samples", "server_times", ESLModelExportTable}, ProbeExportTables...)
}

var exportFormats = []string{"csv", "json"}

// Export writes table in format to w, for analysis outside Headroom. csv has
// a header row and leaves NULL cells empty; json is an array of objects with
// snake_case keys, numbers as numbers and NULL as null. The intervals export
// joins in the run's fields and the latency summary; only json includes the
// encoded histogram ("hist").
func (s *Store) Export(w io.Writer, table, format string) error {
	t, ok := exportTables[table]
	if !ok {
		return fmt.Errorf("cannot export unknown table %q; choose one of %s", table, strings.Join(ExportTables(), ", "))
	}
	if format != "csv" && format != "json" {
		return fmt.Errorf("cannot export %s as unknown format %q; choose one of %s", table, format, strings.Join(exportFormats, ", "))
	}
	var cols []exportCol
	var exprs []string
	for _, col := range t.cols {
		if col.jsonOnly && format != "json" {
			continue
		}
		cols = append(cols, col)
		exprs = append(exprs, col.expr)
	}
	doing := "exporting " + table
	if table == "server_times" {
		// Files from before server timing have no such table; export it empty.
		if _, err := s.db.Exec(serverTimeDDL); err != nil {
			return s.fail(doing, err)
		}
	}
	if table == ESLModelExportTable {
		// Models are stored only by headroom assess.
		if err := s.EnsureESLModelTable(); err != nil {
			return s.fail(doing, err)
		}
	}
	if slices.Contains(ProbeExportTables, table) {
		// The probe's tables exist only in files a probe wrote.
		if err := s.EnsureProbeTables(); err != nil {
			return s.fail(doing, err)
		}
	}
	// The runs export adds each run's merged percentiles (export_runs.go),
	// computed before its query: the first column is the run's id.
	var lat *runLatencies
	if table == "runs" {
		var err error
		if lat, err = s.readRunLatencies(); err != nil {
			return err
		}
	}
	sqlCols := len(cols)
	if lat != nil {
		cols = append(cols, lat.cols()...)
	}
	rows, err := s.db.Query(`SELECT ` + strings.Join(exprs, ", ") + ` ` + t.from)
	if err != nil {
		return s.fail(doing, err)
	}
	defer rows.Close()
	var out rowWriter
	if format == "csv" {
		out = newCSVWriter(w)
	} else {
		out = newJSONWriter(w)
	}
	if err := out.header(cols); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	dest := make([]any, sqlCols)
	for i, col := range cols[:sqlCols] {
		switch col.kind {
		case kInt:
			dest[i] = new(sql.NullInt64)
		case kFloat:
			dest[i] = new(sql.NullFloat64)
		case kBool:
			dest[i] = new(sql.NullBool)
		default:
			dest[i] = new(sql.NullString)
		}
	}
	vals := make([]any, sqlCols, len(cols))
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return s.fail(doing, err)
		}
		vals = vals[:sqlCols]
		for i, d := range dest {
			vals[i] = value(d)
		}
		if lat != nil {
			id, _ := vals[0].(int64)
			vals = lat.values(vals, id)
		}
		if err := out.row(cols, vals); err != nil {
			return fmt.Errorf("%s: %w", doing, err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(doing, err)
	}
	if err := out.end(); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// value unwraps a scanned column to nil (NULL) or int64, float64, bool or
// string.
func value(d any) any {
	switch v := d.(type) {
	case *sql.NullInt64:
		if v.Valid {
			return v.Int64
		}
	case *sql.NullFloat64:
		if v.Valid {
			return v.Float64
		}
	case *sql.NullBool:
		if v.Valid {
			return v.Bool
		}
	case *sql.NullString:
		if v.Valid {
			return v.String
		}
	}
	return nil
}

type rowWriter interface {
	header(cols []exportCol) error
	row(cols []exportCol, vals []any) error
	end() error
}

type csvWriter struct {
	w   *csv.Writer
	rec []string
}

func newCSVWriter(w io.Writer) *csvWriter { return &csvWriter{w: csv.NewWriter(w)} }

func (c *csvWriter) header(cols []exportCol) error {
	for _, col := range cols {
		c.rec = append(c.rec, col.name)
	}
	return c.w.Write(c.rec)
}

func (c *csvWriter) row(_ []exportCol, vals []any) error {
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			c.rec[i] = ""
		case int64:
			c.rec[i] = strconv.FormatInt(v, 10)
		case float64:
			// 'f' rather than 'g': spreadsheets read 1000000 more reliably than 1e+06.
			c.rec[i] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			c.rec[i] = strconv.FormatBool(v)
		case string:
			c.rec[i] = v
		}
	}
	return c.w.Write(c.rec)
}

func (c *csvWriter) end() error {
	c.w.Flush()
	return c.w.Error()
}

// jsonWriter streams the array row by row, so exporting a large campaign
// does not hold it in memory, and keeps the column order of the table.
type jsonWriter struct {
	w    *bufio.Writer
	n    int
	buf  bytes.Buffer
	enc  *json.Encoder
	keys [][]byte
}

func newJSONWriter(w io.Writer) *jsonWriter {
	j := &jsonWriter{w: bufio.NewWriter(w)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false) // spec text is full of '>' and '&'
	return j
}

func (j *jsonWriter) header(cols []exportCol) error {
	for _, col := range cols {
		k, err := j.encode(col.name)
		if err != nil {
			return err
		}
		j.keys = append(j.keys, append(bytes.Clone(k), ':')) // k aliases j.buf
	}
	_, err := j.w.WriteString("[")
	return err
}

func (j *jsonWriter) encode(v any) ([]byte, error) {
	j.buf.Reset()
	if err := j.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")), nil
}

func (j *jsonWriter) row(cols []exportCol, vals []any) error {
	if j.n > 0 {
		j.w.WriteString(",")
	}
	j.n++
	j.w.WriteString("\n{")
	for i, v := range vals {
		if i > 0 {
			j.w.WriteByte(',')
		}
		j.w.Write(j.keys[i])
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nil // JSON has no NaN or infinity
		}
		if s, ok := v.(string); ok && cols[i].kind == kJSON && json.Valid([]byte(s)) {
			v = json.RawMessage(s)
		}
		b, err := j.encode(v)
		if err != nil {
			return err
		}
		j.w.Write(b)
	}
	_, err := j.w.WriteString("}")
	return err
}

func (j *jsonWriter) end() error {
	if j.n > 0 {
		j.w.WriteString("\n")
	}
	j.w.WriteString("]\n")
	return j.w.Flush()
}

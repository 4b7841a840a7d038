// Package page is Headroom's report as a document: a Report of facts and
// sections, each section a plain-language finding with tables, charts and
// notes. The same model is written as report.html (self-contained: inline
// CSS and SVG, no script, nothing fetched) and as report.json, so both hold
// the same numbers. Build makes the sections that the results store answers
// today; later analyses add their own Section values before Write.
package page

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/report/chart"
)

// FormatVersion is the version of report.json's layout; it grows when a
// field changes meaning or goes away (adding fields keeps it).
const FormatVersion = 1

// Report is one campaign's report.
type Report struct {
	Format    int       `json:"format"`
	Title     string    `json:"title"`
	Generator string    `json:"generator"` // the Headroom version that wrote the report
	Facts     Facts     `json:"facts"`
	Sections  []Section `json:"sections"`
}

// Facts are the campaign and environment facts stored with the results.
type Facts struct {
	Campaign    string    `json:"campaign"`
	SpecFile    string    `json:"spec_file"`
	Spec        string    `json:"spec"` // the exact YAML the campaign ran
	Seed        int64     `json:"seed"`
	Created     time.Time `json:"created"`
	ToolVersion string    `json:"tool_version"` // the version that measured
	// Host is the measuring machine's facts as stored (JSON object); nil
	// when none were stored.
	Host json.RawMessage `json:"host,omitempty"`
	// Runs counts every run row; Completed the completed ones.
	Runs      int `json:"runs"`
	Completed int `json:"completed"`
}

// Section is one finding. ID is unique in the report and is the anchor of
// the section in report.html.
type Section struct {
	ID      string  `json:"id"`
	Title   string  `json:"title"`
	Summary string  `json:"summary"` // the finding in one or two plain sentences
	Blocks  []Block `json:"blocks"`
}

// Block is one table, chart, note or piece of verbatim text; exactly one
// field is set.
type Block struct {
	Table *Table       `json:"table,omitempty"`
	Chart *chart.Chart `json:"chart,omitempty"`
	Note  *Note        `json:"note,omitempty"`
	Code  *Code        `json:"code,omitempty"`
	// Answers is the answer card (answer.go); only its section has one.
	Answers *Answers `json:"answers,omitempty"`
}

// Code is verbatim text (the campaign's spec), shown folded.
type Code struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Table is a table of numbers. Every cell's Value is in its column's Unit;
// Text is how the page prints it.
type Table struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Source  string   `json:"source"` // what the numbers are computed from
	Columns []Column `json:"columns"`
	Rows    [][]Cell `json:"rows"`
}

// Column is one table column.
type Column struct {
	Title string `json:"title"`
	Unit  string `json:"unit,omitempty"`
}

// Cell is one table cell: display text and, for a number, its value and
// standard error (nil when there is none; never NaN, which JSON cannot
// hold). Make cells with Text, Number and Estimate.
type Cell struct {
	Text  string   `json:"text"`
	Value *float64 `json:"value,omitempty"`
	SE    *float64 `json:"se,omitempty"`
	// Mark flags the cell: "fail" or "warn" (drawn highlighted), "pass".
	Mark string `json:"mark,omitempty"`
}

// Note is a remark a reader should not miss; Level is "info" or "warning".
type Note struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// Text returns a cell without a number.
func Text(s string) Cell { return Cell{Text: s} }

// Number returns a cell printing text for value v (no value when v is NaN).
func Number(text string, v float64) Cell { return Cell{Text: text, Value: finite(v)} }

// Estimate returns a cell printing text for a mean and its standard error.
func Estimate(text string, mean, se float64) Cell {
	return Cell{Text: text, Value: finite(mean), SE: finite(se)}
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Add appends sections; it is how the CLI plugs later analyses into a
// report that Build made.
func (r *Report) Add(s ...Section) { r.Sections = append(r.Sections, s...) }

var idPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)

// Validate checks what Write needs: IDs that are well-formed and unique
// across sections, tables and charts (they are anchors in one HTML page),
// blocks with exactly one part, tables whose rows fit their columns, and a
// source for every table and chart.
func (r *Report) Validate() error {
	seen := map[string]string{}
	claim := func(id, what string) error {
		if !idPattern.MatchString(id) {
			return fmt.Errorf("%s ID %q must start with a letter and hold only letters, digits, - and _", what, id)
		}
		if prev, dup := seen[id]; dup {
			return fmt.Errorf("%s ID %q is already used by a %s; IDs must be unique in a report", what, id, prev)
		}
		seen[id] = what
		return nil
	}
	for _, s := range r.Sections {
		if err := claim(s.ID, "section"); err != nil {
			return err
		}
		if s.Title == "" {
			return fmt.Errorf("section %s has no title; set Section.Title", s.ID)
		}
		for i, b := range s.Blocks {
			n := 0
			for _, set := range []bool{b.Table != nil, b.Chart != nil, b.Note != nil, b.Code != nil, b.Answers != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				return fmt.Errorf("section %s block %d sets %d of Table, Chart, Note, Code and Answers; set exactly one", s.ID, i, n)
			}
			switch {
			case b.Table != nil:
				if err := claim(b.Table.ID, "table"); err != nil {
					return err
				}
				if err := b.Table.validate(); err != nil {
					return err
				}
			case b.Chart != nil:
				if err := claim(b.Chart.ID, "chart"); err != nil {
					return err
				}
				if err := b.Chart.Validate(); err != nil {
					return err
				}
			}
		}
	}
	return validateLinks(r, seen)
}

// validateLinks checks that every link of the answer card leads to a
// section, table or chart of the report.
func validateLinks(r *Report, ids map[string]string) error {
	for _, s := range r.Sections {
		for _, b := range s.Blocks {
			if b.Answers == nil {
				continue
			}
			for _, it := range b.Answers.Items {
				if it.Href == "" {
					continue
				}
				if _, ok := ids[strings.TrimPrefix(it.Href, "#")]; !ok || !strings.HasPrefix(it.Href, "#") {
					return fmt.Errorf("section %s links %s (%s) to %q, which is not an ID in the report; link only to sections the report holds", s.ID, it.Topic, it.Text, it.Href)
				}
			}
		}
	}
	return nil
}

func (t *Table) validate() error {
	if t.Title == "" || t.Source == "" {
		return fmt.Errorf("table %s: set both Title and Source (what its numbers are computed from)", t.ID)
	}
	for i, row := range t.Rows {
		if len(row) != len(t.Columns) {
			return fmt.Errorf("table %s: row %d has %d cells for %d columns", t.ID, i, len(row), len(t.Columns))
		}
		for j, c := range row {
			for _, p := range []*float64{c.Value, c.SE} {
				if p != nil && finite(*p) == nil {
					return fmt.Errorf("table %s: row %d column %d holds NaN or an infinity; leave Value/SE nil for no number (use page.Number)", t.ID, i, j)
				}
			}
		}
	}
	return nil
}

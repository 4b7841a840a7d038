package comparison

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/compare"
)

func view() View {
	p99, _ := compare.FigureNamed("p99")
	tput, _ := compare.FigureNamed("throughput")
	a, b := []float64{1000, 1100, 1050}, []float64{1500, 1550, 1600}
	cells := []compare.Cell{
		{LevelIndex: 0, LevelA: 200, LevelB: 200, Op: "all", Figure: tput, A: []float64{200, 200, 200}, B: []float64{200, 200, 200}},
		{LevelIndex: 0, LevelA: 200, LevelB: 200, Op: "all", Figure: p99, A: a, B: b},
		{LevelIndex: 0, LevelA: 200, LevelB: 200, Op: "scan", Figure: p99, A: []float64{5}, B: []float64{math.NaN(), 4}},
	}
	for i, c := range cells {
		cells[i].Result = compare.Judge(c.A, c.B, c.Figure.HigherIsBetter, 0.95)
	}
	r, _ := compare.ParseRule("p99:+10%")
	v := View{Comparison: compare.Comparison{NameA: "base|line", NameB: "cand*", Model: "open", Confidence: 0.95, Cells: cells}, Shown: DefaultShown}
	v.Rules = []compare.Judged{r.Judge(cells, 0.95)}
	return v
}

// The Markdown keeps names from breaking its table or starting markup,
// prints the verdicts and the broken rule.
func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, view()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`### Headroom: cand\* compared with base\|line`, "| p99 | 1.05 ms | 1.55 ms | +47.6% |", "| worse |",
		"| p99 scan | 5 µs | – | - | - | not tested: a run has no value for it (no successful request) |", "--fail-on p99:+10%: FAILED at level 1 (+47.6%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// The JSON holds every cell with undefined numbers as null, and the
// broken rule's cells by index.
func TestJSON(t *testing.T) {
	var b bytes.Buffer
	v := view()
	if err := JSON(&b, v); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format int
		Failed bool
		Cells  []map[string]any
		Rules  []struct {
			Rule   string
			Broken []int `json:"broken_cells"`
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Format != Format || !doc.Failed || len(doc.Cells) != 3 || len(doc.Rules) != 1 || len(doc.Rules[0].Broken) != 1 || doc.Rules[0].Broken[0] != 1 {
		t.Fatalf("document: %+v", doc)
	}
	scan := doc.Cells[2]
	if scan["change"] != nil || scan["verdict"] != "not tested" || scan["b"].([]any)[0] != nil {
		t.Errorf("untested cell: %v", scan)
	}
}

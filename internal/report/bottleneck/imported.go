package bottleneck

import (
	"fmt"
	"strings"
	"time"

	ab "github.com/headroom-dev/headroom/internal/analysis/bottleneck"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

// importedSections is the bottleneck classification of a store's imported
// monitoring data (sar, iostat, node_exporter, CloudWatch) over its whole
// span, the same analysis as `headroom bottleneck` prints for such a store;
// nil when the store holds none.
func importedSections(r *results.Results) ([]page.Section, error) {
	_, _, n, err := ab.ImportedData(r)
	if err != nil || n == 0 {
		return nil, err
	}
	a, err := ab.FromImported(r, ab.ImportedOptions{})
	if err != nil {
		return []page.Section{{ID: "bottlenecks-imported", Title: "Bottlenecks of imported data", Summary: "No bottleneck analysis: " + err.Error()}}, nil
	}
	return []page.Section{importedSection(a)}, nil
}

func importedSection(a *ab.Imported) page.Section {
	src := fmt.Sprintf("imported %s data from %s, λ = %v (docs/bottleneck.md)", strings.Join(a.Sources, ", "), strings.Join(a.Hosts, ", "), a.Config.Lambda)
	tb := &page.Table{ID: "bn-imported", Title: "Bottleneck of the imported span", Source: src,
		Columns: []page.Column{{Title: "from"}, {Title: "to"}, {Title: "finding"}}}
	summary := "No window could be classified."
	for i, w := range a.Windows {
		finding := w.Result.Finding
		if w.Err != "" {
			finding = "not classified: " + w.Err
		}
		if i == 0 {
			summary = finding
		}
		tb.Rows = append(tb.Rows, []page.Cell{page.Text(w.Window.From.UTC().Format(time.RFC3339)), page.Text(w.Window.To.UTC().Format(time.RFC3339)), page.Text(finding)})
	}
	sec := page.Section{ID: "bottlenecks-imported", Title: "Bottlenecks of imported data", Summary: summary, Blocks: []page.Block{{Table: tb}}}
	for _, n := range a.Notes {
		sec.Blocks = append(sec.Blocks, page.Block{Note: &page.Note{Level: "info", Text: n}})
	}
	return sec
}

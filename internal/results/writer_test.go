package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	_ "github.com/headroom-dev/headroom/internal/target/postgres"
	_ "github.com/headroom-dev/headroom/internal/target/sqlite"
)

// The facts the campaign writes at run time (from the parsed spec) and the
// facts the schema-1 reader rebuilds from the spec text must agree, so
// that old and new results analyse alike. Each v1 test spec is read both
// ways and compared field by field.
func TestRunTimeFactsMatchTheSchema1Reader(t *testing.T) {
	for _, file := range []string{"v1-treatments.yaml", "v1-closed.yaml", "v1-lab.yaml"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", "v1", file)
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := spec.Parse(path, text)
			if err != nil {
				t.Fatal(err)
			}
			legacy, note := results.LegacyTreatments(store.Campaign{SpecYAML: string(text)})
			if note != "" {
				t.Fatalf("schema-1 reader: %s", note)
			}
			var written []results.Treatment
			if len(s.Treatments) == 0 {
				written = append(written, campaign.TreatmentFacts(s, "", 0, nil))
			}
			for i, tr := range s.Treatments {
				written = append(written, campaign.TreatmentFacts(tr.Spec, tr.Name, i, nil))
			}
			if len(written) != len(legacy) {
				t.Fatalf("%d treatments written, %d read back", len(written), len(legacy))
			}
			for i := range written {
				w, l := written[i], legacy[i]
				l.Set = nil // the writer's settings come from the treatment; compared below
				wj, _ := json.Marshal(w)
				lj, _ := json.Marshal(l)
				if string(wj) != string(lj) {
					t.Errorf("treatment %d:\nwritten %+v\nread    %+v", i, w, l)
				}
			}
			for i, tr := range s.Treatments {
				if got := len(legacy[i].Set); got != len(tr.Set) {
					t.Errorf("treatment %s: %d settings read back, the spec has %d", tr.Name, got, len(tr.Set))
				}
			}
		})
	}
}

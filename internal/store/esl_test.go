package store

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestESLModelsRoundTripAndReplace(t *testing.T) {
	s := newStore(t)
	// A file without the table has no models.
	got, err := s.ESLModels()
	if err != nil || got != nil {
		t.Fatalf("models of a fresh file = %v, %v", got, err)
	}
	doc := `{"kind":"single","qualities":{"ops_per_s":300}}`
	for _, m := range []ESLModel{
		{Treatment: "piops-300", Host: "db1", Resource: "volume:data", Origin: "file a.yaml", Model: doc, Created: t0},
		{Host: "db1", Resource: "cpu", Origin: "flag --model", Model: `{"kind":"single","qualities":{"util_pct":100}}`, Created: t0},
		// Replaces the first one.
		{Treatment: "piops-300", Host: "db1", Resource: "volume:data", Origin: "file b.yaml", Model: doc, Created: t0.Add(time.Second)},
	} {
		if err := s.PutESLModel(m); err != nil {
			t.Fatal(err)
		}
	}
	got, err = s.ESLModels()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Treatment != "" || got[0].Resource != "cpu" ||
		got[1].Origin != "file b.yaml" || got[1].Model != doc || !got[1].Created.Equal(t0.Add(time.Second)) {
		t.Fatalf("models = %+v", got)
	}
	if err := s.PutESLModel(ESLModel{Host: "db1", Model: doc}); err == nil || !strings.Contains(err.Error(), "resource") {
		t.Errorf("a model without resource: %v", err)
	}
	// Kept across close and open.
	path := s.Path()
	s.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if again, err := s2.ESLModels(); err != nil || len(again) != 2 {
		t.Fatalf("after reopening: %v, %v", again, err)
	}
	// Exported as JSON with the model embedded as a value.
	var buf bytes.Buffer
	if err := s2.Export(&buf, ESLModelExportTable, "json"); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("export: %v\n%s", err, buf.String())
	}
	if m, ok := rows[1]["model"].(map[string]any); !ok || m["kind"] != "single" || rows[1]["host"] != "db1" {
		t.Errorf("exported row %v", rows[1])
	}
}

func TestEnsureESLModelTableMakesAnEmptyExport(t *testing.T) {
	s, err := Create(filepath.Join(t.TempDir(), "r.db"), testCampaign())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsureESLModelTable(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Export(&buf, ESLModelExportTable, "csv"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(buf.String()); got != "treatment,host,resource,origin,model,created_ns" {
		t.Errorf("csv of an empty table = %q", got)
	}
}

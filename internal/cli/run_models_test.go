package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// headroom run keeps the ESL model files its spec names in the results it
// writes, so that a later report works when the files are gone; the report
// itself never writes.
func TestRunKeepsTheModelFilesItsSpecNames(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "cpu.yaml")
	if err := os.WriteFile(model, []byte("kind: single\nname: half-a-cpu\nqualities: {util_pct: 50}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile("testdata/null.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "models.yaml")
	body := string(text) + "analysis:\n  esl:\n    models: [{host: somewhere, resource: cpu, file: cpu.yaml}]\n"
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := headroom(t, "run", "-q", "-o", filepath.Join(dir, "out"), spec)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	if ms := storedModels(t, m[1]); len(ms) != 1 || ms[0].Host != "somewhere" || ms[0].Resource != "cpu" {
		t.Fatalf("stored models = %+v; want the one cpu.yaml names", ms)
	}
}

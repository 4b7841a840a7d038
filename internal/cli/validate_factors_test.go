package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate lists the treatments factors: makes, with their settings and
// runs, and the order their blocks run in.
func TestValidatePrintsFactorTreatments(t *testing.T) {
	out, errOut, code := headroom(t, "validate", "../../examples/factorial-sqlite.yaml")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("want a summary, 6 treatments and the run order, got:\n%s", out)
	}
	if want := "ok: 24 runs (6 treatments from factors journal x mix (2 x 3), in randomized order, interleaved by repetition)"; !strings.Contains(lines[0], want) {
		t.Errorf("summary %q, want it to contain %q", lines[0], want)
	}
	if want := "  journal-wal_mix-a: target.journal_mode=wal, workload.ycsb=a; 4 runs (2 levels x 2 repetitions, sequential order)"; lines[1] != want {
		t.Errorf("first treatment %q, want %q", lines[1], want)
	}
	if want := "  journal-delete_mix-c: target.journal_mode=delete, workload.ycsb=c; 4 runs"; !strings.HasPrefix(lines[6], want) {
		t.Errorf("last treatment %q, want %q", lines[6], want)
	}
	order := strings.TrimPrefix(lines[7], "  run order: ")
	blocks := strings.Split(order, ", ")
	if order == lines[7] || len(blocks) != 12 || !strings.HasSuffix(blocks[0], " #1") || !strings.HasSuffix(blocks[11], " #2") {
		t.Errorf("run order line %q", lines[7])
	}
	// The same spec prints the same order.
	again, _, _ := headroom(t, "validate", "../../examples/factorial-sqlite.yaml")
	if again != out {
		t.Errorf("validate printed a different order the second time:\n%s\n%s", out, again)
	}
}

func TestValidateFactorErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	spec := `name: bad
target: {type: sqlite}
workload: {ycsb: a}
load: {model: open, rates: [10]}
factors:
  - path: workload.ycsb
    values: [a, z]
blocks: repetitions
`
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := headroom(t, "validate", path)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		path + `:7: workload.ycsb: in treatment ycsb-z: `,
		path + `:8: blocks: unknown value "repetitions"; did you mean "repetition"?`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// Package archtest checks the package layout of docs/architecture.md: the
// analyses and reports read the results model only, so they can run on old,
// imported and synthetic results, and never reach into the code that makes
// results (the load engine, the lab, targets, deploy recipes, the spec).
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/headroom-dev/headroom/"

// forbidden are the packages analyses and reports must not depend on,
// directly or through another package.
var forbidden = []string{
	"internal/load",
	"internal/lab",
	"internal/target",
	"internal/deploy",
	"internal/spec",
	"internal/campaign",
	"internal/infra",
}

func TestAnalysesAndReportsReadOnlyTheResultsModel(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, pattern := range []string{"./internal/analysis/...", "./internal/report/..."} {
		// One line per package: its path, then every package it depends on.
		out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "../../"+strings.TrimPrefix(pattern, "./")).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pattern, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 2 {
			t.Fatalf("go list %s listed %d packages; the pattern matched too little", pattern, len(lines))
		}
		for _, line := range lines {
			fields := strings.Fields(line)
			pkg := fields[0]
			for _, dep := range fields[1:] {
				rel, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				for _, f := range forbidden {
					if rel == f || strings.HasPrefix(rel, f+"/") {
						t.Errorf("%s depends on %s; analyses and reports read internal/results only", strings.TrimPrefix(pkg, module), rel)
					}
				}
			}
		}
	}
}

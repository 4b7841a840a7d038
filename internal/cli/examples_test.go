package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// catalogFile matches an instance-type catalog (a file a spec's
// lab.catalog names), which examples/ holds beside the specs.
var catalogFile = regexp.MustCompile(`(?m)^instance_types:`)

// Every spec shipped in examples/ validates, so that no documented
// command starts with a spec error.
func TestEveryExampleValidates(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if catalogFile.Match(b) {
			continue
		}
		specs++
		out, errOut, code := headroom(t, "validate", f)
		if code != 0 || !strings.Contains(out, ": ok:") {
			t.Errorf("validate %s exited %d:\n%s%s", filepath.Base(f), code, out, errOut)
		}
	}
	if specs < 20 {
		t.Errorf("only %d example specs found in examples/", specs)
	}
}

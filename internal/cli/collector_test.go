package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Commands that drive load set the collector for load (GOGC 400); the
// others keep Go's default, so that an import or a report over a large
// results file holds no more memory than it must.
func TestOnlyLoadCommandsSetTheCollector(t *testing.T) {
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HEADROOM_DEBUG=1")
	for _, c := range []struct {
		args []string
		load bool
	}{
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, true},
		{[]string{"agent"}, true},
		{[]string{"import", filepath.Join("..", "monitor", "importer", "testdata", "iostat.json"), filepath.Join(dir, "imported.db")}, false},
		{[]string{"report", filepath.Join(dir, "imported.db")}, false},
		{[]string{"version"}, false},
	} {
		cmd := exec.Command(binary, c.args...)
		cmd.Env = env
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		_ = cmd.Run() // run and agent fail on their arguments after the collector is set
		set := strings.Contains(errOut.String(), "headroom: collector: GOGC 400")
		if set != c.load {
			t.Errorf("headroom %s: collector set for load %v, want %v; stderr:\n%s", strings.Join(c.args, " "), set, c.load, errOut.String())
		}
	}
}

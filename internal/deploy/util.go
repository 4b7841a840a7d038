package deploy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// randomPassword is the password of a managed instance's workload user. It
// lives only in memory and in the instance's own files.
func randomPassword() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "hr" + hex.EncodeToString(b)
}

// lastLines returns the last n lines of out as one line for an error.
func lastLines(out []byte, n int) string {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	return lastLines(b, n)
}

// InstanceDir returns the directory for a new managed instance of kind under
// a campaign's results directory: instances/<kind>, or instances/<kind>-2,
// -3, ... when an earlier session's instance (or its kept server.log) is
// already there, so a resumed campaign never collides with it.
func InstanceDir(resultsDir, kind string) string {
	dir := filepath.Join(resultsDir, "instances", kind)
	for n := 2; !emptyOrMissing(dir); n++ {
		dir = filepath.Join(resultsDir, "instances", kind+"-"+strconv.Itoa(n))
	}
	return dir
}

func emptyOrMissing(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err != nil && os.IsNotExist(err) || err == nil && len(entries) == 0
}

// sortedKeys lists a settings map's names in order, so that checks report
// the same first problem every time.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

package deploy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	b, err := readTail(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return lastLines(b, n)
}

// readTail is the last 64 KiB of a log.
func readTail(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if len(b) > 64<<10 {
		b = b[len(b)-64<<10:]
	}
	return b, err
}

// logSays describes a server's log for an error: its path, its last n
// lines, and the error it logged last when that is not among them (a JVM
// logs its shutdown after the exception that caused it).
func logSays(path string, n int) string {
	b, err := readTail(path)
	if err != nil {
		return fmt.Sprintf("its log %s could not be read: %v", path, err)
	}
	tail := lastLines(b, n)
	if cause := failureLine(b); cause != "" && !strings.Contains(tail, cause) {
		return fmt.Sprintf("its log %s ends with: %s; the error it logged last: %s", path, tail, cause)
	}
	return fmt.Sprintf("its log %s ends with: %s", path, tail)
}

// failureLine is the last error a server logged: the exception after a
// Java "Exception encountered during startup", or else the last line
// marked ERROR or FATAL; "" when there is none.
func failureLine(log []byte) string {
	lines := strings.Split(string(log), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.Contains(l, "encountered during startup") && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			l = strings.TrimSpace(lines[i+1])
		} else if !strings.Contains(l, "ERROR") && !strings.Contains(l, "FATAL") {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "..."
		}
		return l
	}
	return ""
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

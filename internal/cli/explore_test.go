package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/explore/exploretest"
)

// explore serves the page on a free loopback port, answers its JSON,
// leaves the store as it was, and stops cleanly on Ctrl-C.
func TestExploreServesAndStopsOnInterrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "grid")
	db := exploretest.Write(t, dir)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "explore", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("no output; stderr: %s", errOut.String())
	}
	first := lines.Text()
	url, ok := strings.CutPrefix(first, "Explorer: http://127.0.0.1:")
	if !ok || !strings.HasSuffix(url, "/ (Ctrl-C stops it)") {
		t.Fatalf("first line %q", first)
	}
	base := "http://127.0.0.1:" + strings.TrimSuffix(url, " (Ctrl-C stops it)")
	res, err := http.Get(base + "api/meta")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Stores []struct{ Name string }
		Points []json.RawMessage
	}
	err = json.NewDecoder(res.Body).Decode(&meta)
	res.Body.Close()
	if err != nil || len(meta.Stores) != 1 || meta.Stores[0].Name != "grid" || len(meta.Points) != 18 {
		t.Fatalf("meta %+v, %v", meta, err)
	}
	res, err = http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "<title>Headroom explorer</title>") {
		t.Fatalf("page: %.200s", page)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	start := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("explore after Ctrl-C: %v\n%s", err, errOut.String())
	}
	if took := time.Since(start); took > 3*time.Second || !strings.Contains(string(rest), "Explorer stopped.") {
		t.Errorf("stopped in %v, saying %q", took, rest)
	}
	after, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("exploring changed results.db")
	}
}

func TestExploreRefusesWhatIsNotAStore(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("hello"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", filepath.Join(dir, "missing")}, "does not exist; pass a results directory"},
		{[]string{"explore", dir}, "has no results.db"},
		{[]string{"explore", notes}, "is not a Headroom results database"},
		{[]string{"explore"}, "requires at least 1 arg"},
		{[]string{"explore", exploretest.Write(t, ""), "--addr", "127.0.0.1:99999"}, "cannot listen on 127.0.0.1:99999"},
	} {
		_, errOut, code := headroom(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want one line with %q", c.args, code, errOut, c.want)
		}
	}
}

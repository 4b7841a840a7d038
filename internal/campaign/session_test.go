package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
)

// A probe's session: its own results directory with the spec copy and a
// store, a treatment opened on this machine with its facts recorded, a
// target filled once, and a reopened session that finds it filled.
func TestSessionOpensFillsAndReopens(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, `
name: sess
target: {type: sqlite}
workload: {ycsb: c, record_count: 300}
load: {model: closed, clients: [1]}
output: out
`)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	ss, err := NewSession(s, SessionOptions{Kind: "probe", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "out", "sess-probe-20261124-100000"); ss.Dir != want {
		t.Fatalf("results directory %s, want %s", ss.Dir, want)
	}
	if b, err := os.ReadFile(filepath.Join(ss.Dir, "spec.yaml")); err != nil || string(b) != string(s.Source) {
		t.Fatalf("spec copy: %v", err)
	}
	var configured []string
	ss.Configure = func(x *spec.Spec) { configured = append(configured, x.Target.Type) }
	ts := Treatments(s)
	if len(ts) != 1 || ts[0].Name != "" || ts[0].Spec != s {
		t.Fatalf("treatments %+v", ts)
	}
	su, err := ss.Open(context.Background(), ts[0])
	if err != nil {
		t.Fatal(err)
	}
	if su.Provider.Name() != "local" || len(su.Hosts) != 1 || strings.Join(configured, ",") != "sqlite" {
		t.Fatalf("provider %s, hosts %v, configured %v", su.Provider.Name(), su.Hosts.Names(), configured)
	}
	var phases []string
	filled, err := su.Fill(context.Background(), func(p progress.State) {
		if p.Populate == nil { // steps, not the rows as they load
			phases = append(phases, p.Phase)
		}
	})
	if err != nil || !filled || strings.Join(phases, ",") != "populate" {
		t.Fatalf("fill: %v, %v, phases %v", filled, err, phases)
	}
	if err := su.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}

	ss, s2, err := ReopenSession(ss.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	r, err := results.New(ss.Store)
	if err != nil {
		t.Fatal(err)
	}
	if tr := r.Treatments(); len(tr) != 1 || tr[0].Target.Type != "sqlite" || tr[0].Workload.RecordCount != 300 {
		t.Fatalf("treatment facts %+v", tr)
	}
	su, err = ss.Open(context.Background(), Treatments(s2)[0])
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	if filled, err := su.Fill(context.Background(), nil); err != nil || filled {
		t.Fatalf("an earlier session populated this treatment: filled %v, %v", filled, err)
	}
	if _, _, err := ReopenSession(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a Headroom results directory") {
		t.Errorf("an empty directory: %v", err)
	}
}

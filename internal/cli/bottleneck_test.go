package cli

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/bottleneck/bottlenecktest"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// bottleneckStore is a one-run campaign whose host h1 ran at 99% CPU.
func bottleneckStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	r := bottlenecktest.OneRun{Name: "bn", Host: "h1", Seconds: 3, Throughput: 10,
		Spec: "name: bn\ntarget: {type: \"null\"}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nphases: {measure: 3s}\n"}.Write(t, dir)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBottleneckCommand(t *testing.T) {
	dir := bottleneckStore(t)
	var out bytes.Buffer
	c := newBottleneckCmd()
	c.SetOut(&out)
	c.SetArgs([]string{dir})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := "Bottlenecks (1s intervals, saturated above 95%)\n" +
		"  level 10, repetition 1 (10.0 ok/s): single bottleneck: h1/cpu, critically saturated in 100% of 1s intervals (f_R = 1.00, mean utilisation 99%)\n" +
		"  intervention analysis: the intervention analysis needs an SLO (slo: in the spec) to judge each run's requests\n" +
		"  maximum throughput 10.0 ok/s at 10; primary bottleneck there: H_CPU\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	// The report gets the same finding as its bottleneck section.
	var w bytes.Buffer
	if err := writeReportFiles(&w, filepath.Join(dir, "results.db"), report.Sections...); err != nil {
		t.Fatal(err)
	}
	c = newBottleneckCmd()
	c.SetArgs([]string{filepath.Join(dir, "nothing")})
	c.SetOut(&out)
	if err := c.Execute(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing results: %v", err)
	}
}

func TestServeAppCommand(t *testing.T) {
	if _, ok := registry.Lookup("apptier"); !ok {
		t.Fatal("the apptier target is not registered in the command line")
	}
	var out, errOut bytes.Buffer
	c := newServeAppCmd()
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SetArgs([]string{"--listen", "127.0.0.1:0", "--db", "HEADROOM_TEST_UNSET_DSN"})
	err := c.Execute()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(errOut.String(), "HEADROOM_TEST_UNSET_DSN is empty") {
		t.Fatalf("error %v, stderr %q", err, errOut.String())
	}
	c = newServeAppCmd()
	errOut.Reset()
	c.SetErr(&errOut)
	c.SetArgs([]string{"--help"})
	if err := c.Execute(); err != nil || !strings.Contains(errOut.String(), "Usage: headroom serve-app --listen ADDR") {
		t.Fatalf("help: %v %q", err, errOut.String())
	}
}

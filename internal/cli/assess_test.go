package cli

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/headroom-dev/headroom/internal/analysis/pressure/pressuretest"
	"github.com/headroom-dev/headroom/internal/report"
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/report/pressure"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// runCommand runs one command tree in-process, as the root would, and
// returns its output and error (with the exit code of an exitError).
func runCommand(t *testing.T, cmd *cobra.Command, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.code
		e.WriteString(ee.msg)
	default:
		code = ExitError
		e.WriteString(err.Error())
	}
	return o.String(), e.String(), code
}

func synthLabDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := pressuretest.SynthLab(filepath.Join(dir, "results.db")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// headroom assess on the designed two-treatment lab results
// (pressuretest.SynthLab): the recommendation before, its verification after,
// and the cost comparison.
func TestAssessCommand(t *testing.T) {
	dir := synthLabDir(t)
	out, errOut, code := runCommand(t, newAssessCmd(), dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Service level pressure · aisle-synth",
		"db1   volume:data  ops_per_s       300 ops/s",
		"[provision more] db1 volume:data: provision more ops_per_s: SLP was above 70% for 100.0% of 60 s (TCPT); mean 97%, p99 100%",
		"-> raise the provisioned IOPS of db1's volume data from 300 to 1800 (+$97.50 per volume-month",
		"[over-provisioned] db1 volume:data is over-provisioned",
		"db1 volume:data ops_per_s: mean SLP fell from 96.7% (piops-300) to 35.0% (piops-1800)",
		"A (measured)           piops-1800  1      $260.90  600.0  $0.435",
		"savings A - B: -$0.308/month per req/s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Other thresholds: 80 and 99.
	out, _, code = runCommand(t, newAssessCmd(), "--threshold", "80", "--threshold", "99", dir)
	if code != 0 || !strings.Contains(out, "critical thresholds 80%, 99%") || !strings.Contains(out, "MCPT>99%") {
		t.Errorf("thresholds: exit %d\n%s", code, out)
	}
	// At the observed op size (8 KiB): ESL 300 ops/s, the same P_op.
	out, _, code = runCommand(t, newAssessCmd(), "--op-size", "observed", dir)
	if code != 0 || !strings.Contains(out, "volume ESLs at each interval's mean op size") || !strings.Contains(out, "96.7%") {
		t.Errorf("observed op size: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--model", "db1-volume.yaml", dir}, {"--op-size", "largest", dir}, {"--model", "db1/volume:data@iostat=x.yaml", dir}} {
		if _, e, code := runCommand(t, newAssessCmd(), bad...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want usage error", bad, code, e)
		}
	}
	if _, e, code := runCommand(t, newAssessCmd(), filepath.Join(dir, "nothing")); code != ExitError || !strings.Contains(e, "does not exist") {
		t.Errorf("missing results: exit %d %s", code, e)
	}
}

// The report of the same results has the pressure sections after the
// built-in ones, and a campaign without models has none.
func TestReportHasPressureSections(t *testing.T) {
	dir := synthLabDir(t)
	var w bytes.Buffer
	if err := writeReportFiles(&w, filepath.Join(dir, "results.db"), report.Sections...); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sectionIDs(readReport(t, filepath.Join(dir, page.JSONFile))), ",")
	if !strings.Contains(got, ",slp,slp-recommendations,slp-before-after,slp-cost") || strings.Index(got, "events") > strings.Index(got, ",slp,") {
		t.Errorf("sections %s", got)
	}
	html, err := os.ReadFile(filepath.Join(dir, page.HTMLFile))
	if err != nil || !strings.Contains(string(html), "Service level pressure per host and service · piops-300") {
		t.Errorf("report.html lacks the SLP boxplot: %v", err)
	}
	// A campaign without lab or models has no pressure section.
	st, err := store.Create(filepath.Join(t.TempDir(), "plain.db"), store.Campaign{Name: "plain", SpecYAML: "name: plain\ntarget: {type: \"null\"}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nphases: {measure: 1s}\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if secs, err := pressureSectionsOf(t, st); err != nil || len(secs) != 0 {
		t.Errorf("plain campaign: %d sections, %v", len(secs), err)
	}
	// A model file that cannot be read becomes a warning, not a failed report.
	bad := "name: bad\ntarget: {type: \"null\"}\nworkload: {ycsb: c}\nload: {model: open, rates: [10]}\nphases: {measure: 1s}\nanalysis: {esl: {models: [{host: db1, resource: cpu, file: /nonexistent/m.yaml}]}}\n"
	st2, err := store.Create(filepath.Join(t.TempDir(), "bad.db"), store.Campaign{Name: "bad", SpecYAML: bad})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	secs, err := pressureSectionsOf(t, st2)
	if err != nil || len(secs) != 1 || len(secs[0].Blocks) != 1 || !strings.Contains(secs[0].Blocks[0].Note.Text, "/nonexistent/m.yaml") {
		t.Errorf("unreadable model: %+v, %v", secs, err)
	}
}

// pressureSectionsOf builds the pressure sections of an open store.
func pressureSectionsOf(t *testing.T, st *store.Store) ([]page.Section, error) {
	t.Helper()
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	return pressure.ReportSections(r)
}

// headroom report reads the models of analysis.esl.models files but never
// writes to the results database: the file is byte for byte the same
// afterwards. headroom assess --save then keeps the models in it, and a
// later assess finds them when the file is gone.
func TestReportNeverWritesAndAssessSaves(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	spec := pressuretest.SynthLabSpecText + "analysis:\n  esl:\n    models: [{host: db1, resource: cpu, file: cpu.yaml}]\n"
	if err := pressuretest.SynthLabSpec(db, filepath.Join(dir, "aisle-synth.yaml"), spec); err != nil {
		t.Fatal(err)
	}
	model := writeFile(t, dir, "cpu.yaml", "kind: single\nname: half-a-cpu\nqualities: {util_pct: 50}\n")
	sum := func() [32]byte {
		t.Helper()
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	if _, e, code := runCommand(t, newReportCmd(), dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, e)
	}
	if after := sum(); after != before {
		t.Fatal("headroom report changed the results database")
	}
	raw, err := os.ReadFile(filepath.Join(dir, page.JSONFile))
	if err != nil || !strings.Contains(string(raw), "file cpu.yaml") {
		t.Errorf("report.json does not use the model file: %v", err)
	}
	stored := func() []string {
		t.Helper()
		var out []string
		for _, m := range storedModels(t, db) {
			out = append(out, m.Treatment+" "+m.Host+"/"+m.Resource+" "+m.Origin)
		}
		return out
	}
	if ms := stored(); len(ms) != 0 {
		t.Fatalf("models stored by the report: %v", ms)
	}
	// Without --save, assess does not write either.
	if _, e, code := runCommand(t, newAssessCmd(), dir); code != 0 || sum() != before {
		t.Fatalf("assess without --save: exit %d %s, or the database changed", code, e)
	}
	out, e, code := runCommand(t, newAssessCmd(), "--save", dir)
	if code != 0 || !strings.Contains(out, "Saved 2 ESL model(s) in "+db) {
		t.Fatalf("assess --save: exit %d %s\n%s", code, e, out)
	}
	if got := strings.Join(stored(), "; "); got != "piops-1800 db1/cpu file cpu.yaml; piops-300 db1/cpu file cpu.yaml" {
		t.Errorf("stored models: %s", got)
	}
	if err := os.Remove(model); err != nil {
		t.Fatal(err)
	}
	out, e, code = runCommand(t, newAssessCmd(), dir)
	if code != 0 || !strings.Contains(out, "db1 cpu: file cpu.yaml, stored with the results") || !strings.Contains(out, "the copy stored with the results is used") {
		t.Errorf("assess from the stored models: exit %d %s\n%s", code, e, out)
	}
	if _, e, code := runCommand(t, newAssessCmd(), "--save", "--no-save", dir); code != ExitUsage {
		t.Errorf("--save --no-save: exit %d %s", code, e)
	}
}

// storedModels reads the ESL models kept in the results database at path.
func storedModels(t *testing.T, path string) []store.ESLModel {
	t.Helper()
	r, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ms, err := r.ESLModels()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

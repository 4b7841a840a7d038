package pressure

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/pressure/pressuretest"
	_ "github.com/headroom-dev/headroom/internal/lab" // registers the shipped catalog, as the binary does
	"github.com/headroom-dev/headroom/internal/report/page"
	"github.com/headroom-dev/headroom/internal/results"
)

func assessed(t *testing.T, write func(string) error, opt assess.Options) *assess.Assessment {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	r, err := results.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	a, err := assess.FromResults(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func validate(t *testing.T, secs []page.Section) []string {
	t.Helper()
	r := &page.Report{Title: "t"}
	r.Add(secs...)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range secs {
		ids = append(ids, s.ID)
		for _, bl := range s.Blocks {
			if bl.Chart != nil {
				if _, err := bl.Chart.SVG(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return ids
}

// The designed two-treatment lab campaign (pressuretest.SynthLab; the
// numbers are asserted in internal/analysis/pressure): the terminal output
// and the report sections hold the same findings, shifts and costs.
func TestRenderSynthLab(t *testing.T) {
	a := assessed(t, pressuretest.SynthLab, assess.Options{})
	shifts := strings.Join(Shifts(a), "\n")
	for _, want := range []string{"db1 volume:data ops_per_s: mean SLP fell from 96.7% (piops-300) to 35.0% (piops-1800)",
		"db1 volume:data bytes_per_s: mean SLP rose from 3.6% (piops-300) to 7.9% (piops-1800)"} {
		if !strings.Contains(shifts, want) {
			t.Errorf("shifts lack %q:\n%s", want, shifts)
		}
	}
	var w bytes.Buffer
	Terminal(&w, a)
	out := w.String()
	for _, want := range []string{"Treatment piops-300 · measured phases of 1 completed run(s)", "[provision more] db1 volume:data: provision more ops_per_s",
		"-> raise the provisioned IOPS of db1's volume data from 300 to 1800", "B (scale-out, linear)  piops-300   2", "savings A - B: -$0.308/month per req/s (option A buys a req/s for less)",
		"96.7%", "30 s (50%)", "medium (1 vCPU, 50 Mbit/s) + piops 100 GiB at 300 IOPS"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal output lacks %q:\n%s", want, out)
		}
	}
	secs := Sections(a)
	if ids := validate(t, secs); strings.Join(ids, ",") != "slp,slp-recommendations,slp-before-after,slp-cost" {
		t.Errorf("sections %v", ids)
	}
	// The time series of P_op shades the 70% critical period, the whole minute.
	found := false
	for _, bl := range secs[0].Blocks {
		if ch := bl.Chart; ch != nil && ch.ID == "slp-ts-0-piops-300-3" {
			found = true
			if ch.Line == nil || len(ch.Line.Ranges) != 1 || ch.Line.Ranges[0].From != 0 || ch.Line.Ranges[0].To != 60 || len(ch.Line.Series[0].Points) != 60 {
				t.Errorf("time series %+v", ch.Line)
			}
		}
	}
	if !found {
		t.Error("no time series chart slp-ts-0-piops-300-3")
	}
}

// Imported data with a model from the command line: the normalisation
// fit is the last section, and its sentence says what it found.
func TestRenderImportedFit(t *testing.T) {
	model := filepath.Join(t.TempDir(), "io1.yaml")
	if err := os.WriteFile(model, []byte("kind: single\nname: io1-300\nqualities: {ops_per_s: 300, bytes_per_s: 78643200}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := assessed(t, pressuretest.SynthImported, assess.Options{Models: []assess.ModelFile{{Host: "db1", Resource: "disk:xvdf", File: model}}})
	if len(a.Fits) != 1 {
		t.Fatalf("fits %+v", a.Fits)
	}
	if s := fitSentence(a.Fits[0]); !strings.Contains(s, "reports 16 x the operations") || !strings.Contains(s, "16 KiB unit") || !strings.Contains(s, "not the documented 256 KiB") {
		t.Errorf("sentence %q", s)
	}
	ids := validate(t, Sections(a))
	if ids[len(ids)-1] != "slp-normalisation" {
		t.Errorf("sections %v", ids)
	}
}

// A treatment's pressure IDs hold its index (names that map to the same ID
// stay apart) and its name as the page's sections write it (format.ID).
func TestIDPart(t *testing.T) {
	got := strings.Join([]string{idPart("", 0), idPart("piops-300", 0), idPart("Fast.2", 1), idPart("type-small_iops-300", 2)}, " ")
	if want := "0 0-piops-300 1-fast-2 2-type-small-iops-300"; got != want {
		t.Errorf("idPart: %s, want %s", got, want)
	}
}

package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/progress"
)

// populateLine is a line printer's report of a population under way.
var populateLine = regexp.MustCompile(`^populate: (\d+)/(\d+) rows, (\d+) rows/s, ETA (\S+)$`)

// A campaign's population reports its rows, rate and ETA to the progress
// display as it loads, for YCSB records (SQLite's bulk loader) and for a
// statement workload's data set alike: the line printer (CI, logs) prints
// them every period, each ETA the rows left at the rate it shows, and the
// populated record in the store keeps rows, seconds and their rate.
func TestPopulateReportsRowsRateAndETA(t *testing.T) {
	for _, c := range []struct{ name, workload, countKey string }{
		{"ycsb", "{ycsb: c, record_count: 20000}", "records"},
		{"statements", `
  statements:
    - {name: q, sql: "SELECT i_title FROM item WHERE i_id = ?", params: [{uniform: [1, 100]}]}
  dataset: {builtin: tpcw, scale: {ebs: 1, items: 100}}`, "rows"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := parse(t, dir, `
name: populate-progress
target: {type: sqlite}
workload: `+c.workload+`
load: {model: closed, clients: [1]}
phases: {warmup: 0s, measure: 100ms}
interval: 100ms
monitor: {enabled: false}
output: out
`)
			var buf bytes.Buffer
			out, err := Start(context.Background(), s, Options{Progress: progress.NewLines(&buf, 20*time.Millisecond)})
			if err != nil {
				t.Fatal(err)
			}
			st := openStore(t, out)

			var d map[string]any
			evs, err := st.Events(-1)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Kind == eventPopulated {
					if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
						t.Fatal(err)
					}
				}
			}
			n, _ := d[c.countKey].(float64)
			secs, _ := d["seconds"].(float64)
			rate, _ := d["rows_per_second"].(float64)
			if n <= 0 || secs <= 0 || math.Abs(rate-n/secs) > 0.01*rate {
				t.Fatalf("populated record %v: want %s, seconds and rows_per_second = %s / seconds", d, c.countKey, c.countKey)
			}
			t.Logf("populated %.0f %s in %.2f s (%.0f rows/s)", n, c.countKey, secs, rate)

			var heard int
			for _, l := range strings.Split(buf.String(), "\n") {
				m := populateLine.FindStringSubmatch(l)
				if m == nil {
					continue
				}
				heard++
				done, _ := strconv.ParseFloat(m[1], 64)
				total, _ := strconv.ParseFloat(m[2], 64)
				perSec, _ := strconv.ParseFloat(m[3], 64)
				eta, err := time.ParseDuration(m[4])
				if err != nil || done >= total || perSec <= 0 {
					t.Fatalf("line %q: done %v of %v at %v rows/s, ETA %v (%v)", l, done, total, perSec, eta, err)
				}
				// The ETA is the rows left at the rate shown: within the
				// rounding of the rate (to a row/s) and of the ETA (to a
				// tenth of a second under 10 s).
				want := (total - done) / perSec
				tol := 0.051 + want*0.5/perSec
				if math.Abs(eta.Seconds()-want) > tol {
					t.Errorf("line %q: ETA %v, but %v rows left at %v rows/s is %.2f s", l, eta, total-done, perSec, want)
				}
				// The rate is the loader's: within a factor of ten of the whole
				// population's (it is over the last few seconds only).
				if perSec < rate/10 || perSec > rate*10 {
					t.Errorf("line %q: %v rows/s, the whole population ran at %.0f rows/s", l, perSec, rate)
				}
			}
			t.Logf("%d populate lines:\n%s", heard, buf.String())
			if heard == 0 {
				t.Fatalf("no populate line with rows, rate and ETA over %.2f s at one per 20 ms:\n%s", secs, buf.String())
			}
			if !strings.Contains(buf.String(), "populating the target...\n") || !regexp.MustCompile(`(?m)^populate: \d+ rows in \S+ \(\d+ rows/s\)$`).MatchString(buf.String()) {
				t.Errorf("no opening or closing populate line:\n%s", buf.String())
			}
		})
	}
}

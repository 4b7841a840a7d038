package ods

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/results"
)

// TestFromResultsTreatments checks the records of a committed store
// against the store's own interval rows: one record per measured second
// with requests, throughput = count per second, configurations by
// treatment, and the seed's $4 per node-hour without catalog prices.
func TestFromResultsTreatments(t *testing.T) {
	r, err := results.Open("../../results/testdata/v1/treatments.db")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := FromResults(r, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Independently: sum the measured rates, count the intervals' starts.
	var wantCount, gotCount float64
	wantSeconds := 0
	for _, run := range r.AllCompletedRuns() {
		ivs, err := r.Store().Intervals(run.ID, "measure")
		if err != nil {
			t.Fatal(err)
		}
		seen := map[time.Time]bool{}
		for _, iv := range ivs {
			wantCount += float64(iv.Count) / iv.Duration.Seconds()
			if !seen[iv.Start] && iv.Count+iv.Errors > 0 {
				seen[iv.Start] = true
				wantSeconds++
			}
		}
	}
	if len(recs) != wantSeconds || wantSeconds == 0 {
		t.Fatalf("%d records, want %d (one per measured second)", len(recs), wantSeconds)
	}
	configs := map[string]int{}
	for _, rec := range recs {
		gotCount += rec.Throughput.Total()
		configs[rec.Config]++
		if rec.Normal < rec.Sensitive || rec.Normal > 1 || rec.Sensitive < 0 {
			t.Fatalf("record %+v: satisfaction out of order", rec)
		}
		if rec.Cost != 4 {
			t.Fatalf("record %+v: cost %v, want $4 (one node, no catalog)", rec, rec.Cost)
		}
	}
	if math.Abs(gotCount-wantCount) > 1e-6*wantCount {
		t.Fatalf("records sum to %v req/s, intervals to %v", gotCount, wantCount)
	}
	if len(configs) != 2 {
		t.Fatalf("configurations %v, want two (small and big)", configs)
	}
	t.Logf("configs %v", configs)
}

func TestFromResultsLabPrices(t *testing.T) {
	r, err := results.Open("../../results/testdata/v1/lab.db")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := FromResults(r, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("no records from lab.db")
	}
	tr := r.Treatments()[0]
	for _, rec := range recs {
		hl, ok := r.HostLimits("db1", rec.Time)
		want := 4.0
		if ok && hl.PricePerHour > 0 {
			want = hl.HourlyCost()
		}
		if rec.Cost != want {
			t.Fatalf("record at %v costs %v, want %v", rec.Time, rec.Cost, want)
		}
		if rec.Config != Key(tr) {
			t.Fatalf("config %q, want %q", rec.Config, Key(tr))
		}
	}
	t.Logf("%d records, first %+v", len(recs), recs[0])
}

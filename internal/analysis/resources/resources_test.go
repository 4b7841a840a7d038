package resources

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// A generated window with known answers: CPU 20/40/60% (mean 40, max 60),
// disk vdb busier than vda, two interfaces whose rx+tx sum to 3000 B/s,
// and samples outside the window that must be ignored.
func TestSummarizeKnownWindow(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	var ss []monitor.Sample
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	add := func(i int, host, res, metric string, v float64) {
		ss = append(ss, monitor.Sample{Host: host, Resource: res, Metric: metric, Start: at(i), Period: time.Second, Value: v, Source: monitor.SourceSampled})
	}
	for i, v := range []float64{20, 40, 60} {
		add(i, "db", "cpu", monitor.CPUUtilPct, v)
		add(i, "db", "cpu0", monitor.CPUUtilPct, 100) // per core: not the host figure
		add(i, "db", "disk:vda", monitor.DiskUtilPct, 10)
		add(i, "db", "disk:vdb", monitor.DiskUtilPct, float64(30+10*i))
		add(i, "db", "net:eth0", monitor.NetRxBytes, 1000)
		add(i, "db", "net:eth0", monitor.NetTxBytes, 500)
		add(i, "db", "net:eth1", monitor.NetRxBytes, 1500)
	}
	add(-1, "db", "cpu", monitor.CPUUtilPct, 99) // before the window
	add(3, "db", "cpu", monitor.CPUUtilPct, 99)  // at its end: excluded
	add(1, "app", "cpu", monitor.CPUUtilPct, 5)
	got := Summarize(ss, t0, at(3))
	if len(got) != 2 || got[0].Host != "app" || got[1].Host != "db" {
		t.Fatalf("hosts %+v", got)
	}
	db := got[1]
	if db.CPUSamples != 3 || math.Abs(db.CPUMean-40) > 1e-9 || db.CPUMax != 60 {
		t.Fatalf("cpu %+v", db)
	}
	if db.Disk != "vdb" || math.Abs(db.DiskUtil-40) > 1e-9 || db.DiskUtilMax != 50 {
		t.Fatalf("disk %+v", db)
	}
	if math.Abs(db.NetBytes-3000) > 1e-9 {
		t.Fatalf("net %v, want 3000 B/s", db.NetBytes)
	}
	if got[0].Disk != "" || got[0].NetBytes != 0 {
		t.Fatalf("app has no disk or network samples: %+v", got[0])
	}
}

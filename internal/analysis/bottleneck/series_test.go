package bottleneck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

func sample(host, res, metric string, sec int, v float64) monitor.Sample {
	return monitor.Sample{Host: host, Resource: res, Metric: metric, Start: t0.Add(time.Duration(sec) * time.Second), Period: time.Second, Value: v, Source: monitor.SourceSampled}
}

func seriesByID(s []Series) map[string][]float64 {
	out := map[string][]float64{}
	for _, x := range s {
		for _, p := range x.Points {
			out[x.Resource] = append(out[x.Resource], p.Util)
		}
	}
	return out
}

func TestFromSamples(t *testing.T) {
	var in []monitor.Sample
	for sec := range 2 {
		in = append(in,
			sample("db1", "cpu", monitor.CPUUtilPct, sec, 50+float64(sec)),
			sample("db1", "cpu0", monitor.CPUUtilPct, sec, 99),
			sample("db1", "cpu", monitor.CPUUserPct, sec, 40), // not a utilisation the classification uses
			sample("db1", "memory", monitor.MemUsedBytes, sec, 1e9),
			sample("db1", "disk:vda", monitor.DiskUtilPct, sec, 30),
			sample("db1", "disk:vda", monitor.DiskReadOps, sec, 100),
			sample("db1", "disk:vda", monitor.DiskWriteOps, sec, 50),
			sample("app1", "net:eth0", monitor.NetRxBytes, sec, 1e6),
			sample("app1", "net:eth0", monitor.NetTxBytes, sec, 2.5e6),
			sample("app1", "net:eth1", monitor.NetTxBytes, sec, 1),
			sample("db1", "cgroup:/lab/db1", monitor.ProcCPUPct, sec, 150),
			sample("db1", "cgroup:/lab/db1", monitor.CgroupIOReadOps, sec, 300),
			sample("db1", "cgroup:/lab/db1", monitor.CgroupIOWriteOps, sec, 100),
			sample("db1", "cgroup:/lab/db1", monitor.CgroupIOReadBytes, sec, 4e6),
			sample("db1", "volume:vol-1", monitor.DiskUtilPct, sec, 70),
		)
	}
	in = append(in, sample("db1", "cpu", monitor.CPUUtilPct, 5, math.NaN())) // skipped
	caps := Capacities{
		Link:      map[string]float64{"app1/net:eth0": 5e6, "app1/net:eth9": 1e6},
		IOPS:      map[string]float64{"db1/cgroup:/lab/db1": 500, "db1/disk:vda": 200},
		Bandwidth: map[string]float64{"db1/cgroup:/lab/db1": 8e6},
		Cores:     map[string]float64{"db1/cgroup:/lab/db1": 2},
	}
	s, notes, err := FromSamples(in, caps, Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := seriesByID(s)
	want := map[string][]float64{
		"db1/cpu":                  {50, 51},
		"db1/disk:vda":             {30, 30},
		"db1/disk:vda#iops":        {75, 75}, // (100 + 50) / 200
		"app1/net:eth0":            {50, 50}, // max(1, 2.5) MB/s of 5 MB/s
		"db1/cgroup:/lab/db1#iops": {80, 80}, // (300 + 100) / 500
		"db1/cgroup:/lab/db1#bw":   {50, 50}, // 4 MB/s of 8 MB/s
		"db1/cgroup:/lab/db1#cpu":  {75, 75}, // 150% of one core on a 2-core quota
		"db1/volume:vol-1":         {70, 70},
	}
	if len(got) != len(want) {
		t.Fatalf("series %v, want %v", got, want)
	}
	for id, w := range want {
		g := got[id]
		if len(g) != len(w) {
			t.Fatalf("%s: %v, want %v", id, g, w)
		}
		for i := range w {
			if math.Abs(g[i]-w[i]) > 1e-9 {
				t.Fatalf("%s: %v, want %v", id, g, w)
			}
		}
	}
	wantNotes := []string{
		"app1/net:eth1: no link capacity is given, so its utilisation is unknown and it is left out; add its bytes per second to the link capacities",
		"app1/net:eth9: a capacity is given but no rx_bytes_per_s or tx_bytes_per_s samples were found, so it is left out",
	}
	if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Fatalf("notes:\n%s", strings.Join(notes, "\n"))
	}

	// Per-core CPUs only when asked.
	s, _, _ = FromSamples(in, Capacities{}, Config{PerCore: true})
	if g := seriesByID(s)["db1/cpu0"]; len(g) != 2 || g[0] != 99 {
		t.Fatalf("per core: %v", seriesByID(s))
	}
}

func TestFromSamplesErrors(t *testing.T) {
	ok := []monitor.Sample{sample("db1", "cpu", monitor.CPUUtilPct, 0, 50)}
	for _, c := range []struct {
		in   []monitor.Sample
		caps Capacities
		want string
	}{
		{[]monitor.Sample{{Host: "db1", Resource: "cpu", Metric: "util_pct", Start: t0}}, Capacities{}, "has period 0s; every sample needs the positive length"},
		{ok, Capacities{Link: map[string]float64{"eth0": 1e6}}, `link capacity key "eth0" is not host/resource; write it like db1/net:eth0`},
		{ok, Capacities{IOPS: map[string]float64{"db1/disk:vda": 0}}, "IOPS capacity of db1/disk:vda is 0; give a positive number of operations per second"},
		{ok, Capacities{Cores: map[string]float64{"db1/cgroup:/x": math.NaN()}}, "cores capacity of db1/cgroup:/x is NaN"},
		{[]monitor.Sample{sample("db1", "net:eth0", monitor.NetRxBytes, 0, 1), sample("db1", "net:eth0", monitor.DiskUtilPct, 0, 1)}, Capacities{}, ""},
	} {
		_, _, err := FromSamples(c.in, c.caps, Config{})
		if c.want == "" {
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
}

func TestResample(t *testing.T) {
	// A 1 s series offset by 250 ms from the grid: each interval is 3/4 of
	// one point and 1/4 of the next.
	var pts []Point
	for i := range 4 {
		pts = append(pts, Point{Start: t0.Add(time.Duration(i)*time.Second + 250*time.Millisecond), Period: time.Second, Util: float64(10 * (i + 1))})
	}
	out, err := Resample([]Series{{Resource: "x/cpu", Points: pts}}, Window{From: t0, To: t0.Add(5 * time.Second)}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Interval 0: only 750 ms covered by the first point: observed (>= half), 10.
	// Interval 1: 0.25*10 + 0.75*20 = 17.5; 2: 27.5; 3: 37.5; 4: 250 ms of
	// the last point: not observed.
	want := []float64{10, 17.5, 27.5, 37.5}
	got := out[0].Points
	if len(got) != len(want) {
		t.Fatalf("points %+v", got)
	}
	for i, p := range got {
		if math.Abs(p.Util-want[i]) > 1e-9 || !p.Start.Equal(t0.Add(time.Duration(i)*time.Second)) || p.Period != time.Second {
			t.Fatalf("point %d: %+v, want %v", i, p, want[i])
		}
	}
	// A 60 s CloudWatch sample cannot be judged at 1 s.
	_, err = Resample([]Series{{Resource: "i-1/volume:vol-1", Points: []Point{{Start: t0, Period: time.Minute, Util: 99}}}}, Window{}, time.Second)
	if err == nil || err.Error() != "bottleneck: i-1/volume:vol-1 has samples of 1m0s, longer than lambda 1s; set lambda to at least 1m0s" {
		t.Fatalf("coarse samples: %v", err)
	}
	// Timer jitter of a few milliseconds is accepted.
	if _, err := Resample([]Series{{Resource: "x/cpu", Points: []Point{{Start: t0, Period: 1004 * time.Millisecond, Util: 1}}}}, Window{From: t0, To: t0.Add(time.Second)}, time.Second); err != nil {
		t.Fatal(err)
	}
}

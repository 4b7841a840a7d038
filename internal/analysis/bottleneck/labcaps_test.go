package bottleneck

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
)

// labDetail is a "lab" event as a campaign records it (trimmed to what the
// capacities read, plus fields they must ignore).
const labDetail = `{"name":"x","subnet":"10.201.0.0/24","cgroups":"v1","hosts":[
 {"name":"app1","type":"medium","vcpus":0.25,"network_mbit":50,"volumes":null,"addr":"10.201.0.10","now":{"vcpus":0.25,"network_mbit":50,"iops":0,"mibps":0}},
 {"name":"db1","type":"medium","vcpus":1,"network_mbit":4,"volumes":[{"name":"data","type":"piops","size_gib":20,"iops":200,"mibps":62.5}],
  "now":{"vcpus":1,"network_mbit":4,"iops":200,"mibps":62.5}},
 {"name":"db2","type":"medium","network_mbit":0,"volumes":[{"name":"data","type":"standard","iops":0,"mibps":0}]}]}`

func TestLabCapacities(t *testing.T) {
	caps, err := LabCapacities(labDetail)
	if err != nil {
		t.Fatal(err)
	}
	// 50 Mbit/s = 6.25e6 bytes/s; 4 Mbit/s = 5e5; db2's link is unlimited.
	if caps.Link["app1/net:eth0"] != 6.25e6 || caps.Link["db1/net:eth0"] != 5e5 || len(caps.Link) != 2 {
		t.Fatalf("links %v", caps.Link)
	}
	if caps.IOPSPerDirection["db1/volume:data"] != 200 || len(caps.IOPSPerDirection) != 1 {
		t.Fatalf("IOPS %v", caps.IOPSPerDirection)
	}
	if caps.BandwidthPerDirection["db1/volume:data"] != 62.5*(1<<20) || len(caps.BandwidthPerDirection) != 1 {
		t.Fatalf("bandwidth %v", caps.BandwidthPerDirection)
	}
	if _, err := LabCapacities("not json"); err == nil || !strings.Contains(err.Error(), "not the lab record") {
		t.Fatalf("error %v", err)
	}
}

func TestCapacitiesAt(t *testing.T) {
	other := strings.Replace(labDetail, `"network_mbit":4,"iops"`, `"network_mbit":8,"iops"`, 1)
	evs := []store.Event{
		{Time: t0, Kind: EventLab, Detail: labDetail},
		{Time: t0.Add(time.Minute), Kind: "populated", Detail: "{}"},
		{Time: t0.Add(2 * time.Minute), Kind: EventLab, Detail: other},
	}
	for _, c := range []struct {
		at   time.Time
		want float64
	}{{t0.Add(time.Second), 5e5}, {t0.Add(2 * time.Minute), 1e6}, {t0.Add(time.Hour), 1e6}} {
		caps, err := CapacitiesAt(evs, c.at)
		if err != nil || caps.Link["db1/net:eth0"] != c.want {
			t.Errorf("at %v: %v %v, want %v", c.at, caps.Link, err, c.want)
		}
	}
	caps, err := CapacitiesAt(evs, t0.Add(-time.Second))
	if err != nil || caps.Link != nil {
		t.Fatalf("before any lab: %+v %v", caps, err)
	}
}

// The lab limits reads and writes separately: 150 reads/s and 150
// writes/s on a 200-IOPS volume use 75% of it, not 150%; against a summed
// limit (a provider's) the same samples are 150%.
func TestPerDirectionUtilisation(t *testing.T) {
	var ss []monitor.Sample
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Second)
		for _, m := range []string{monitor.DiskReadOps, monitor.DiskWriteOps} {
			ss = append(ss, monitor.Sample{Host: "db1", Resource: "volume:data", Metric: m, Start: at, Period: time.Second, Value: 150})
		}
		ss = append(ss, monitor.Sample{Host: "vm", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: 99})
	}
	series, _, err := FromSamples(ss, Capacities{IOPSPerDirection: map[string]float64{"db1/volume:data": 200}}, Config{})
	if err != nil || len(series) != 2 || series[0].Resource != "db1/volume:data#iops" || series[0].Points[0].Util != 75 {
		t.Fatalf("per direction: %+v %v", series, err)
	}
	series, _, err = FromSamples(ss, Capacities{IOPS: map[string]float64{"db1/volume:data": 200}}, Config{})
	if err != nil || series[0].Points[0].Util != 150 {
		t.Fatalf("summed: %+v %v", series, err)
	}
	// Hosts keeps only the named hosts' resources.
	series, _, err = FromSamples(ss, Capacities{IOPSPerDirection: map[string]float64{"db1/volume:data": 200}}, Config{Hosts: []string{"db1"}})
	if err != nil || len(series) != 1 || series[0].Resource != "db1/volume:data#iops" {
		t.Fatalf("hosts filter: %+v %v", series, err)
	}
	res, err := Classify(series, Window{}, Config{Hosts: []string{"db1"}})
	if err != nil || len(res.Bottlenecks) != 0 || math.Abs(res.Resources[0].Mean-75) > 1e-9 {
		t.Fatalf("classification %+v %v", res, err)
	}
}

// Package pressuretest writes synthetic results stores with known answers
// for the tests of the pressure assessment, its report and the command
// line. Every value is designed; nothing is random.
package pressuretest

import (
	"encoding/json"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// SynthLabSpecText is the spec stored by SynthLab: PostgreSQL-like load on a
// medium lab host with a 100 GiB piops volume at 300 IOPS, and the same at
// 1800 IOPS as a second treatment.
const SynthLabSpecText = `name: aisle-synth
lab:
  name: synth
  hosts:
    - {name: db1, type: medium, volumes: [{name: data, type: piops, size_gib: 100, iops: 300}]}
target: {type: "null"}
workload: {ycsb: c, record_count: 1000}
load: {model: open, rates: [600]}
phases: {warmup: 1s, measure: 60s}
interval: 1s
treatments:
  - name: piops-300
  - name: piops-1800
    set:
      lab.hosts[0].volumes[0].iops: 1800
`

// SynthStart is when SynthLab's first run starts.
var SynthStart = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// SynthHost is db1 of SynthLab at iops provisioned IOPS, as the lab event
// records it: a medium host (1 vCPU, 50 Mbit/s, $0.18/h, 62.5 MiB/s volume
// connection) with a 100 GiB piops volume ($0.125/GiB-month, $0.065/IOPS-
// month).
func SynthHost(iops float64) results.HostLimits {
	return results.HostLimits{Host: "db1", Type: "medium", VCPUs: 1, MemoryBytes: 1 << 30, NetworkMbit: 50, PricePerHour: 0.18,
		Volumes: []results.VolumeLimit{{Name: "data", Type: "piops", SizeGiB: 100, IOPS: iops, MiBps: 62.5, MonthlyPrice: 100*0.125 + iops*0.065}},
		Address: "10.201.7.10"}
}

// LabEvent is the detail of a "lab" event as the campaign writes it, for
// hosts in the results model's terms; catalog may be nil (as lab events
// were written before the catalog was recorded with them).
func LabEvent(name string, hosts []results.HostLimits, catalog *results.Catalog) string {
	type host struct {
		Name         string                `json:"name"`
		Type         string                `json:"type"`
		VCPUs        float64               `json:"vcpus"`
		MemoryBytes  int64                 `json:"memory_bytes"`
		NetworkMbit  float64               `json:"network_mbit"`
		PricePerHour float64               `json:"price_per_hour"`
		Volumes      []results.VolumeLimit `json:"volumes"`
		Addr         string                `json:"addr"`
	}
	ev := struct {
		Name    string           `json:"name"`
		Subnet  string           `json:"subnet"`
		Cgroups string           `json:"cgroups"`
		Hosts   []host           `json:"hosts"`
		Catalog *results.Catalog `json:"catalog,omitempty"`
	}{Name: name, Subnet: "10.201.7.0/24", Cgroups: "v1", Catalog: catalog}
	for _, h := range hosts {
		ev.Hosts = append(ev.Hosts, host{Name: h.Host, Type: h.Type, VCPUs: h.VCPUs, MemoryBytes: h.MemoryBytes, NetworkMbit: h.NetworkMbit,
			PricePerHour: h.PricePerHour, Volumes: h.Volumes, Addr: h.Address})
	}
	b, _ := json.Marshal(ev) // plain values: cannot fail
	return string(b)
}

// SynthLab writes a results store at path with two treatments of one 60 s
// run each (designed so that the answers can be computed by hand):
//
//   - piops-300: the volume reads 300 ops/s of 8 KiB except for seconds
//     20-29 at 240 ops/s (P_op 100% and 80%); CPU 30%; 220 req/s.
//   - piops-1800: 630 ops/s of 8 KiB (P_op 35%); CPU 60%; 600 req/s.
//
// The link carries 1 MB/s each way (16% of 50 Mbit/s). The lab events
// carry no catalog, as those of Headroom before the catalog was recorded.
// The store has no fact tables: the facts are read from SynthLabSpec.
func SynthLab(path string) error { return SynthLabSpec(path, "aisle-synth.yaml", SynthLabSpecText) }

// SynthLabSpec is SynthLab with another stored spec (e.g. SynthLabSpecText
// with an analysis: section) and spec file name (model files are read
// relative to it).
func SynthLabSpec(path, specFile, specYAML string) error {
	st, err := store.Create(path, store.Campaign{Name: "aisle-synth", SpecFile: specFile, SpecYAML: specYAML, Seed: 1, CreatedAt: SynthStart})
	if err != nil {
		return err
	}
	defer st.Close()
	start := SynthStart
	for i, tr := range []struct {
		name       string
		iops       float64
		throughput float64
		ops        func(sec int) float64
		cpu        float64
	}{
		{"piops-300", 300, 220, func(sec int) float64 {
			if sec >= 20 && sec < 30 {
				return 240
			}
			return 300
		}, 30},
		{"piops-1800", 1800, 600, func(int) float64 { return 630 }, 60},
	} {
		if err := st.AddEvent(store.Event{Time: start.Add(-5 * time.Second), Kind: results.EventLab, Detail: LabEvent("synth", []results.HostLimits{SynthHost(tr.iops)}, nil)}); err != nil {
			return err
		}
		id, err := st.StartRun(store.Run{Seq: 0, Slot: i * 100000, Treatment: tr.name, Model: "open", Level: 600, Repetition: 1, Start: start})
		if err != nil {
			return err
		}
		measure := start.Add(time.Second)
		var samples []monitor.Sample
		// Samples start with the warmup: only the measured 60 s count.
		for sec := -1; sec < 60; sec++ {
			at := measure.Add(time.Duration(sec) * time.Second)
			ops := tr.ops(max(sec, 0))
			mk := func(res, metric string, v float64) monitor.Sample {
				return monitor.Sample{Host: "db1", Resource: res, Metric: metric, Start: at, Period: time.Second, Value: v, Source: monitor.SourceSampled}
			}
			samples = append(samples,
				mk("volume:data", monitor.DiskReadOps, ops), mk("volume:data", monitor.DiskWriteOps, 0),
				mk("volume:data", monitor.DiskReadBytes, ops*8192), mk("volume:data", monitor.DiskWriteBytes, 0),
				mk("cpu", monitor.CPUUtilPct, tr.cpu),
				mk("net:eth0", monitor.NetRxBytes, 1e6), mk("net:eth0", monitor.NetTxBytes, 1e6),
				// The raw cgroup counters carry volume metrics too; they have
				// no model and must be left out.
				mk("cgroup:/headroom-lab/synth/db1", monitor.CgroupIOReadOps, ops))
			// The measuring machine's own samples: no model.
			samples = append(samples, monitor.Sample{Host: "machine", Resource: "cpu", Metric: monitor.CPUUtilPct, Start: at, Period: time.Second, Value: 90, Source: monitor.SourceSampled})
		}
		if err := st.AddSamples(id, samples); err != nil {
			return err
		}
		end := measure.Add(60 * time.Second)
		if err := st.FinishRun(id, store.StatusCompleted, "", end, store.RunSummary{Sent: int64(tr.throughput * 60), Completed: int64(tr.throughput * 60),
			MeasureStart: measure, MeasureEnd: end, MeasureSecs: 60, Throughput: tr.throughput}); err != nil {
			return err
		}
		start = end.Add(time.Minute)
	}
	return nil
}

// SynthImported writes a store of imported data only at path: a client
// side iostat series of disk:xvdf on host db1 (1 s: 40 reads/s of
// 256 KiB) and a provider-side CloudWatch series of volume:vol-1 (60 s)
// that counts 16 KiB units, i.e. 16 x the client's operations (seed 000
// §5.3), over 10 minutes.
func SynthImported(path string) error {
	st, err := store.Create(path, store.Campaign{Name: "imported", CreatedAt: SynthStart})
	if err != nil {
		return err
	}
	defer st.Close()
	var samples []monitor.Sample
	for sec := 0; sec < 600; sec++ {
		at := SynthStart.Add(time.Duration(sec) * time.Second)
		ops := 40.0
		if sec%60 < 30 {
			ops = 20 // vary, so that the fit is not one point
		}
		mk := func(metric string, v float64) monitor.Sample {
			return monitor.Sample{Host: "db1", Resource: "disk:xvdf", Metric: metric, Start: at, Period: time.Second, Value: v, Source: monitor.SourceIostat}
		}
		samples = append(samples, mk(monitor.DiskReadOps, ops), mk(monitor.DiskWriteOps, 0), mk(monitor.DiskReadBytes, ops*256*1024), mk(monitor.DiskWriteBytes, 0))
	}
	for m := 0; m < 10; m++ {
		at := SynthStart.Add(time.Duration(m) * time.Minute)
		mk := func(metric string, v float64) monitor.Sample {
			return monitor.Sample{Host: "db1", Resource: "volume:vol-1", Metric: metric, Start: at, Period: time.Minute, Value: v, Source: monitor.SourceCloudWatch}
		}
		// Mean client ops over each minute: 30/s; the provider counts 16 per op.
		samples = append(samples, mk(monitor.DiskReadOps, 16*30), mk(monitor.DiskWriteOps, 0), mk(monitor.DiskReadBytes, 30*256*1024), mk(monitor.DiskWriteBytes, 0))
	}
	return st.AddSamples(0, samples)
}

package slp

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	"github.com/headroom-dev/headroom/internal/monitor"
)

// volumeSamples returns the four rate samples of one volume interval.
func volumeSamples(sec float64, readOps, writeOps, readBytes, writeBytes float64) []monitor.Sample {
	mk := func(metric string, v float64) monitor.Sample {
		return monitor.Sample{Host: "db1", Resource: "volume:vol-1", Metric: metric, Start: at(sec), Period: time.Second, Value: v, Source: monitor.SourceSampled}
	}
	return []monitor.Sample{mk(monitor.DiskReadOps, readOps), mk(monitor.DiskWriteOps, writeOps),
		mk(monitor.DiskReadBytes, readBytes), mk(monitor.DiskWriteBytes, writeBytes)}
}

func TestVolumePressureAgainstAnalyticalModel(t *testing.T) {
	const KiB, MiB = 1024, 1 << 20
	var samples []monitor.Sample
	// 2 s: 210 ops of 1 MiB would be far over; 60 ops of 1 MiB.
	samples = append(samples, volumeSamples(2, 30, 30, 30*MiB, 30*MiB)...)
	// 0 s: 150 reads + 60 writes of 4 KiB.
	samples = append(samples, volumeSamples(0, 150, 60, 150*4*KiB, 60*4*KiB)...)
	// 1 s: idle.
	samples = append(samples, volumeSamples(1, 0, 0, 0, 0)...)
	// Another metric of the same resource is ignored.
	samples = append(samples, monitor.Sample{Host: "db1", Resource: "volume:vol-1", Metric: monitor.DiskQueueLength, Start: at(0), Period: time.Second, Value: 3, Source: monitor.SourceSampled})
	obs, err := VolumeObservations(samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 3 || obs[0].Ops != 210 || obs[0].OpSizeKiB() != 4 || obs[2].OpSizeKiB() != 1024 {
		t.Fatalf("observations = %+v", obs)
	}

	// 100 GiB, 300 PIOPS, 62.5 MiB/s connection: at 4 KiB 300 ops/s and
	// 1200 KiB/s; at 1 MiB 62.5 ops/s and 62.5 MiB/s.
	m, _ := esl.NewAnalytical("", esl.ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300, InstanceCapMiBPerS: 62.5})
	v, err := VolumePressure(obs, m, VolumeOptions{Policy: ObservedSize})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{70, 0, 96} {
		if !near(v.Ops[i].Value, want, 1e-9) || !near(v.Bytes[i].Value, want, 1e-9) {
			t.Fatalf("observed size, second %d: SLP ops %v, bw %v, want %v", i, v.Ops[i].Value, v.Bytes[i].Value, want)
		}
	}
	if len(v.OpsESL.Levels) != 0 {
		t.Fatal("ObservedSize reports no fixed ESL")
	}

	// BestSize: ops against 300 ops/s (at 4 KiB), bandwidth against
	// 62.5 MiB/s (first reached at 256 KiB).
	v, err = VolumePressure(obs, m, VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v.OpsESL.Mean() != 300 || v.BytesESL.Mean() != 62.5*MiB || !strings.Contains(v.BytesESL.Source, "at 256 KiB") {
		t.Fatalf("best ESLs: %v (%s), %v (%s)", v.OpsESL, v.OpsESL.Source, v.BytesESL, v.BytesESL.Source)
	}
	for i, want := range [][2]float64{{70, 100 * 210 * 4.0 / (62.5 * 1024)}, {0, 0}, {20, 96}} {
		if !near(v.Ops[i].Value, want[0], 1e-9) || !near(v.Bytes[i].Value, want[1], 1e-9) {
			t.Fatalf("best size, second %d: SLP ops %v, bw %v, want %v", i, v.Ops[i].Value, v.Bytes[i].Value, want)
		}
	}
	// Fixed candidates: bandwidth at 64 KiB only = 18.75 MiB/s.
	v, _ = VolumePressure(obs, m, VolumeOptions{CandidatesKiB: []float64{64}})
	if v.BytesESL.Mean() != 18.75*MiB {
		t.Fatalf("candidate 64 KiB: %v", v.BytesESL)
	}

	// A model with only ops gives no bandwidth series.
	only, _ := esl.NewSingleModel("", map[esl.Quality]float64{esl.OpsPerS: 300})
	v, err = VolumePressure(obs, only, VolumeOptions{})
	if err != nil || v.Bytes != nil || v.Ops[2].Value != 20 {
		t.Fatalf("ops-only model: %+v %v", v, err)
	}
	net, _ := esl.NewSingleModel("", map[esl.Quality]float64{"net_bytes_per_s": 1})
	if _, err := VolumePressure(obs, net, VolumeOptions{}); err == nil {
		t.Fatal("a model without volume qualities must fail")
	}
	if _, err := VolumePressure(obs, m, VolumeOptions{Policy: 7}); err == nil {
		t.Fatal("an unknown policy must fail")
	}
}

func TestVolumeObservationsErrors(t *testing.T) {
	full := volumeSamples(0, 1, 1, 4096, 4096)
	missing := volumeSamples(1, 1, 1, 4096, 4096)[:3] // no write bytes
	other := volumeSamples(2, 1, 1, 4096, 4096)
	other[0].Resource = "volume:vol-2"
	onlyOps := volumeSamples(0, 1, 1, 4096, 4096)[:2]
	dup := append(volumeSamples(0, 1, 1, 1, 1), volumeSamples(0, 1, 1, 1, 1)[0])
	for _, c := range []struct {
		in   []monitor.Sample
		want string
	}{
		{append(append([]monitor.Sample{}, full...), missing...), "every interval needs the same metrics"},
		{append(append([]monitor.Sample{}, full...), other...), "samples mix volumes"},
		{onlyOps, "needs both ops and bytes"},
		{dup, "two read_ops_per_s samples"},
		{nil, "no volume samples"},
	} {
		if _, err := VolumeObservations(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("err = %v, want %q", err, c.want)
		}
	}
	m, _ := esl.NewSingleModel("", map[esl.Quality]float64{esl.OpsPerS: 1, esl.BytesPerS: 1})
	odd := []VolumeSecond{{Start: t0, Period: time.Second, Bytes: 5}}
	if _, err := VolumePressure(odd, m, VolumeOptions{Policy: ObservedSize}); err == nil || !strings.Contains(err.Error(), "no operations") {
		t.Fatalf("bytes without ops: %v", err)
	}
	if v, err := VolumePressure(odd, m, VolumeOptions{}); err != nil || v.Bytes[0].Value != 500 || v.Ops[0].Value != 0 {
		t.Fatalf("bytes without ops under BestSize: %+v, %v", v, err)
	}
}

// An end-to-end designed case in the shape of seed 000 §5.2: one volume
// held at 90% of its provisioned IOPS with small ops for 10 minutes (high
// P_op, low P_bw), another idling at 20%.
func TestVolumeSubjectsToRecommendation(t *testing.T) {
	var samples []monitor.Sample
	for sec := range 600 {
		busy := volumeSamples(float64(sec), 270, 0, 270*4096, 0) // 270 of 300 ops/s at 4 KiB
		idle := volumeSamples(float64(sec), 60, 0, 60*4096, 0)
		for i := range idle {
			idle[i].Host, idle[i].Resource = "db2", "volume:vol-2"
		}
		samples = append(samples, append(busy, idle...)...)
	}
	m, _ := esl.NewAnalytical("", esl.ProvisionedIOPSVolume{SizeGiB: 100, ProvisionedIOPS: 300, InstanceCapMiBPerS: 62.5})
	subjects, err := VolumeSubjects(samples, func(host, resource string) esl.Model { return m }, VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(subjects) != 4 || subjects[0].Host != "db1" || subjects[0].Quality != esl.OpsPerS || subjects[3].Service != "volume:vol-2" {
		t.Fatalf("subjects = %d, first %+v", len(subjects), subjects[0].Host)
	}
	got, err := Recommend(subjects, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	// db1: provision more ops (P_op 90%); its P_bw is 270 x 4 KiB over
	// 62.5 MiB/s = 1.7%. db2 at 20% / 0.4% is over-provisioned.
	if len(got) != 2 || got[0].Class != ProvisionMore || got[0].Quality != esl.OpsPerS || !near(got[0].Mean, 90, 1e-9) ||
		got[1].Class != OverProvisioned || got[1].Host != "db2" || !near(got[1].P99, 20, 1e-9) {
		for _, f := range got {
			t.Log(f.Message)
		}
		t.Fatalf("findings = %d", len(got))
	}
	none, _ := VolumeSubjects(samples, func(host, resource string) esl.Model { return nil }, VolumeOptions{})
	if len(none) != 0 {
		t.Fatalf("no models, %d subjects", len(none))
	}
}

// With an empirical model BestSize picks among the benchmarked sizes.
func TestBestSizeEmpirical(t *testing.T) {
	const MiB = 1 << 20
	m, err := esl.Build("", []esl.BenchmarkRun{
		{OpSizeKiB: 4, ReadPct: 100, OpsPerS: []float64{300, 300}, BytesPerS: []float64{300 * 4096, 300 * 4096}},
		{OpSizeKiB: 1024, ReadPct: 100, OpsPerS: []float64{60, 60}, BytesPerS: []float64{60 * MiB, 60 * MiB}},
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	obs := []VolumeSecond{{Start: t0, Period: time.Second, Ops: 150, Bytes: 150 * 64 * 1024}}
	v, err := VolumePressure(obs, m, VolumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 150 of 300 ops/s; 9.375 MiB/s of 60.
	if v.Ops[0].Value != 50 || !near(v.Bytes[0].Value, 100*9.375/60, 1e-9) || !strings.Contains(v.BytesESL.Source, "at 1024 KiB") {
		t.Fatalf("empirical best size: %+v, %s", v, v.BytesESL.Source)
	}
}

package campaign

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/results"
)

// populate_unthrottled: PostgreSQL on a half-vCPU lab host with a 100-IOPS
// volume populates faster with the hosts' limits lifted than under them,
// and the limit log shows the lift (volume unthrottled, all the machine's
// cores) and the restore to the defined limits before the first run,
// which runs under those.
func TestPopulateUnthrottledIsFasterAndRestoresTheLimits(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	populate := func(unthrottled bool) (float64, *results.Results) {
		t.Helper()
		flag := "false"
		if unthrottled {
			flag = "true"
		}
		dir := labtest.SearchableDir(t)
		s := parse(t, dir, `
name: lab-populate
lab:
  name: t-camp-unthr
  populate_unthrottled: `+flag+`
  hosts:
    - {name: db1, type: small, memory_mib: 256, volumes: [{name: data, type: piops, size_gib: 20, iops: 100}]}
target: {type: postgres, managed: {host: db1, settings: {shared_buffers: 16MB}}}
workload: {ycsb: c, record_count: 5000}
load: {model: closed, clients: [1]}
phases: {warmup: 0s, measure: 500ms}
interval: 500ms
monitor: {disks: [], interfaces: []}
output: out
`)
		_, st := start(t, s)
		r, err := results.New(st)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := r.Events(-1)
		if err != nil {
			t.Fatal(err)
		}
		var d populatedDetail
		for _, e := range evs {
			if e.Kind == eventPopulated {
				if err := json.Unmarshal([]byte(e.Detail), &d); err != nil {
					t.Fatal(err)
				}
			}
		}
		if d.Records != 5000 || d.Seconds <= 0 || d.Unthrottled != unthrottled {
			t.Fatalf("populated record %+v (unthrottled %v)", d, unthrottled)
		}
		return d.Seconds, r
	}
	limited, _ := populate(false)
	lifted, r := populate(true)
	t.Logf("5000 records into PostgreSQL on 0.5 vCPU and 100 IOPS: %.2f s under the limits, %.2f s with populate_unthrottled", limited, lifted)
	if lifted >= 0.8*limited {
		t.Errorf("populate_unthrottled took %.2f s, not clearly faster than %.2f s under the limits", lifted, limited)
	}

	runs := r.CompletedRuns("")
	if len(runs) != 1 {
		t.Fatalf("completed runs: %+v", runs)
	}
	var causes []string
	for _, h := range r.HostLimitSeries("db1") {
		causes = append(causes, h.Cause)
		v, _ := h.Volume("data")
		switch h.Cause {
		case causePopulateUnthrottled, causeStartUnthrottled:
			if v.IOPS != 0 || v.MiBps != 0 || h.VCPUs != float64(runtime.NumCPU()) {
				t.Errorf("while populating: %g IOPS, %g MiB/s, %g vCPUs; want the volume unthrottled (0) and all %d cores", v.IOPS, v.MiBps, h.VCPUs, runtime.NumCPU())
			}
		case causePopulateDone:
			if !h.From.Before(runs[0].Summary.MeasureStart) {
				t.Errorf("the limits came back at %v, after the run's measured phase began (%v)", h.From, runs[0].Summary.MeasureStart)
			}
		}
	}
	// The server starts unthrottled too, then the population.
	want := []string{"up", causeStartUnthrottled, causeStartDone, causePopulateUnthrottled, causePopulateDone}
	if !slices.Equal(causes, want) {
		t.Fatalf("db1's limit log causes %v, want %v", causes, want)
	}
	series := r.HostLimitSeries("db1")
	up := series[0]
	for _, i := range []int{2, 4} {
		if !sameLimits(up, series[i]) { // cause and time aside
			t.Errorf("after %s the limits are %+v, not as defined %+v", series[i].Cause, series[i], up)
		}
	}
	// The run is judged against the defined limits.
	if h, ok := r.HostLimits("db1", runs[0].Summary.MeasureStart); !ok || h.VCPUs != 0.5 || iopsOf(h) != 100 {
		t.Errorf("limits in force during the run: %+v", h)
	}
}

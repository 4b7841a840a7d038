package lab

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/cpuref"
)

// fakeMeasure makes Calibrate see a machine of the given speed and load.
func fakeMeasure(t *testing.T, m cpuref.Measurement) {
	t.Helper()
	prev := measure
	measure = func() (cpuref.Measurement, error) { return m, nil }
	t.Cleanup(func() { measure = prev })
}

// The quota is vcpus x reference / measured, capped by the machine's cores
// (docs/lab.md); machine mode and labs without a unit keep a vCPU a core.
func TestCoresForFollowsTheMeasuredSpeed(t *testing.T) {
	for _, c := range []struct {
		name        string
		cu          *ComputeUnit
		vcpus, want float64
	}{
		{"a machine twice as fast halves the quota", &ComputeUnit{Mode: ComputeReference, Score: 2, Cores: 2}, 0.5, 0.25},
		{"a slower machine grants more of its cores", &ComputeUnit{Mode: ComputeReference, Score: 0.5, Cores: 2}, 0.5, 1},
		{"capped by the cores it has", &ComputeUnit{Mode: ComputeReference, Score: 0.5, Cores: 2}, 4, 2},
		{"machine mode: a vCPU is a core, uncapped as before", &ComputeUnit{Mode: ComputeMachine, Score: 0.5, Cores: 2}, 4, 4},
		{"a lab made before compute units", nil, 0.25, 0.25},
	} {
		if got := c.cu.CoresFor(c.vcpus); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: CoresFor(%g) = %g, want %g", c.name, c.vcpus, got, c.want)
		}
	}
}

func TestCalibrateSaysWhichHostsCannotGetTheirShare(t *testing.T) {
	fakeMeasure(t, cpuref.Measurement{Score: 0.5, Cores: 2, OthersCores: 0.5, StealPct: 0, Spread: 0.02})
	hosts := []HostConfig{{Name: "db1", VCPUs: 2}, {Name: "app1", VCPUs: 0.25}}
	cu, err := Calibrate(ComputeReference, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if cu.Mode != ComputeReference || cu.Score != 0.5 || cu.Reference != cpuref.ReferenceCore {
		t.Fatalf("compute unit %+v", cu)
	}
	// db1 needs 4 cores of a machine at half the reference speed and gets
	// 2; with app1's 0.5 the quotas add up to 2.5 cores, above the 1.5
	// the others left free.
	all := strings.Join(cu.Notes, "\n")
	for _, want := range []string{"host db1 cannot get its share", "need 4.00 cores", "it gets all 2, 1.00 vCPUs' worth", "add up to 2.50 cores", "1.50 free"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes %q lack %q", all, want)
		}
	}
	if strings.Contains(all, "app1 cannot") {
		t.Errorf("app1 fits, yet: %q", all)
	}

	// Machine mode measures but does not convert, and caps nothing.
	cu, err = Calibrate(ComputeMachine, []HostConfig{{Name: "db1", VCPUs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if cu.CoresFor(1) != 1 || len(cu.Notes) != 0 || !strings.Contains(cu.String(), "one core of this machine") {
		t.Errorf("machine mode: %v cores for 1 vCPU, notes %q, %q", cu.CoresFor(1), cu.Notes, cu.String())
	}
	// The reference unit is the default.
	if cu, err = Calibrate("", nil); err != nil || cu.Mode != ComputeReference {
		t.Errorf("the default mode: %+v, %v", cu, err)
	}
}

func TestComputeUnitFieldErrors(t *testing.T) {
	if _, err := Calibrate("ecu", nil); err == nil || !strings.Contains(err.Error(), "lab.compute_unit: \"ecu\" is not a compute unit; use reference") {
		t.Errorf("Calibrate(ecu): %v", err)
	}
	d := Definition{ComputeUnit: "fast", Hosts: []HostSpec{{Name: "db1", Type: "small"}}}
	if _, _, err := d.Resolve(""); err == nil || !strings.Contains(err.Error(), "lab.compute_unit") {
		t.Errorf("Resolve with compute_unit fast: %v", err)
	}
	fakeMeasure(t, cpuref.Measurement{Score: math.NaN(), Cores: 2})
	if _, err := Calibrate(ComputeReference, nil); err == nil || !strings.Contains(err.Error(), "compute_unit: machine") {
		t.Errorf("an unmeasurable machine: %v", err)
	}
}

// A lab host's kernel quota is its vCPUs in this machine's cores, recorded
// in its state; in machine mode it is its vCPUs.
func TestLabQuotaIsTheComputeUnitsCores(t *testing.T) {
	needLab(t)
	fakeMeasure(t, cpuref.Measurement{Score: 0.8, Cores: 2})
	for _, mode := range []string{ComputeReference, ComputeMachine} {
		name := "t-cu-" + mode[:4]
		_ = Down(name)
		l, err := Up(name, []HostConfig{host("db1", "small", 0.4, 128, 0)}, DefaultCatalog(), Options{ComputeUnit: mode})
		if err != nil {
			t.Fatal(err)
		}
		want := 0.5
		if mode == ComputeMachine {
			want = 0.4
		}
		h, _ := l.Host("db1")
		if q := cpuQuota(t, l, "db1"); math.Abs(q-want) > 1.0/cpuPeriodUs || math.Abs(h.Now.Cores-want) > 1e-9 || l.State().ComputeUnit.Mode != mode {
			t.Errorf("%s: kernel quota %g, state %g cores, want %g", mode, q, h.Now.Cores, want)
		}
		if err := Down(name); err != nil {
			t.Error(err)
		}
	}
}

// Work written as the reference core's CPU time takes 1/score of it on a
// machine of that score, so that a host of v vCPUs (v/score cores) serves
// the same requests per second; in machine mode CPU time stays CPU time.
func TestCPUTimeFor(t *testing.T) {
	fast := &ComputeUnit{Mode: ComputeReference, Score: 2, Cores: 2}
	if got := fast.CPUTimeFor(4 * time.Millisecond); got != 2*time.Millisecond {
		t.Errorf("reference mode at score 2: %v, want 2ms", got)
	}
	// The host's requests per second: cores / CPU time per request.
	v := 0.5
	if rps := fast.CoresFor(v) / fast.CPUTimeFor(4*time.Millisecond).Seconds(); math.Abs(rps-v/0.004) > 1e-9 {
		t.Errorf("a %g vCPU host at 4 ms of reference work serves %g req/s, want %g", v, rps, v/0.004)
	}
	machine := &ComputeUnit{Mode: ComputeMachine, Score: 2, Cores: 2}
	var none *ComputeUnit
	if machine.CPUTimeFor(time.Millisecond) != time.Millisecond || none.CPUTimeFor(time.Millisecond) != time.Millisecond {
		t.Error("machine mode and a lab without a unit keep CPU time as written")
	}
}

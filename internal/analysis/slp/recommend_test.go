package slp

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
)

// constant returns n seconds at v, with the seconds listed in spikes
// (start, length, value) overwritten.
func constant(n int, v float64, spikes ...[3]int) Series {
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = v
	}
	for _, s := range spikes {
		for i := s[0]; i < s[0]+s[1]; i++ {
			vals[i] = float64(s[2])
		}
	}
	return series(t0, time.Second, vals...)
}

func TestRecommendClasses(t *testing.T) {
	subjects := []Subject{
		// db1: ops persistently at 85%: provision more ops; bandwidth low.
		{"db1", "volume:v1", esl.OpsPerS, constant(600, 85)},
		{"db1", "volume:v1", esl.BytesPerS, constant(600, 40)},
		// db2: ops at 50% with a 120 s event at 99% in a 1800 s run:
		// transient (TCPT 6.7% < 50%, MCPT 120 s >= 60 s).
		{"db2", "volume:v2", esl.OpsPerS, constant(1800, 50, [3]int{600, 120, 99})},
		{"db2", "volume:v2", esl.BytesPerS, constant(1800, 30)},
		// db3: both qualities below 70% at p99: over-provisioned.
		{"db3", "volume:v3", esl.OpsPerS, constant(1000, 60)},
		{"db3", "volume:v3", esl.BytesPerS, constant(1000, 50, [3]int{0, 20, 68})},
		// db4: mostly 60%, 2% of the time at 75% and one 30 s spike at 99%:
		// p99 too high for over-provisioned, the spike too short for
		// transient: no finding.
		{"db4", "volume:v4", esl.OpsPerS, constant(1000, 60, [3]int{0, 20, 75}, [3]int{500, 30, 99})},
	}
	got, err := Recommend(subjects, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		for _, f := range got {
			t.Log(f.Message)
		}
		t.Fatalf("%d findings, want 3", len(got))
	}
	pm, tr, op := got[0], got[1], got[2]
	if pm.Host != "db1" || pm.Class != ProvisionMore || pm.Quality != esl.OpsPerS || pm.TCPTPct != 100 || pm.Mean != 85 || pm.Covered != 600*time.Second {
		t.Fatalf("db1: %+v", pm)
	}
	if tr.Host != "db2" || tr.Class != TransientSaturation || tr.MCPT != 120*time.Second || !near(tr.TCPTPct, 100*120.0/1800, 1e-9) || !near(tr.MCPTPct, 100*120.0/1800, 1e-9) {
		t.Fatalf("db2: %+v", tr)
	}
	if op.Host != "db3" || op.Class != OverProvisioned || op.Quality != "" || op.P99 != 68 {
		t.Fatalf("db3: %+v", op)
	}
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{pm, "db1 volume:v1: provision more ops_per_s: SLP was above 70% for 100.0% of 600 s (TCPT); mean 85%, p99 85%"},
		{tr, "db2 volume:v2: a transient event saturates ops_per_s: SLP stayed above 95% for 120 s in a row (MCPT, 6.7% of 1800 s) but was above 70% for only 6.7% of the time"},
		{op, "db3 volume:v3 is over-provisioned: p99 SLP below 70% on every quality (bytes_per_s 68%, ops_per_s 60%)"},
	} {
		if c.f.Message != c.want {
			t.Fatalf("message\n got %q\nwant %q", c.f.Message, c.want)
		}
	}

	// Tighter rules: a 30 s event counts as transient, and 85% is not
	// persistent pressure above 90%.
	got, _ = Recommend(subjects, Rules{TransientMCPT: 30 * time.Second, PersistentThreshold: 90})
	classes := map[string]Class{}
	for _, f := range got {
		classes[f.Host] = f.Class
	}
	if classes["db4"] != TransientSaturation || classes["db1"] == ProvisionMore {
		t.Fatalf("tight rules: %+v", classes)
	}

	if _, err := Recommend([]Subject{{"h", "s", esl.OpsPerS, nil}}, Rules{}); err == nil || !strings.Contains(err.Error(), "no SLP points") {
		t.Fatalf("empty subject: %v", err)
	}
	if _, err := Recommend(subjects, Rules{PersistentTCPTPct: 150}); err == nil {
		t.Fatal("TCPT share over 100% must fail")
	}
}

// A long series with one saturating minute keeps its p99 below 70%
// (60 s of 6000 s is exactly 1%): the transient finding stands alone,
// without the contradictory advice to provision less.
func TestRecommendTransientIsNotOverProvisioned(t *testing.T) {
	ops := constant(6000, 40, [3]int{3000, 60, 100})
	if b, _ := Boxplot(ops); b.P99 != 40 {
		t.Fatalf("p99 = %v, want 40 (the setup needs a low p99)", b.P99)
	}
	got, err := Recommend([]Subject{
		{"db1", "volume:v1", esl.OpsPerS, ops},
		{"db1", "volume:v1", esl.BytesPerS, constant(6000, 20)},
	}, Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Class != TransientSaturation || got[0].MCPT != time.Minute {
		for _, f := range got {
			t.Log(f.Message)
		}
		t.Fatalf("%d findings, want only the transient one", len(got))
	}
}

package campaign

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/controller/ods"
	"github.com/headroom-dev/headroom/internal/controller/runlog"
	"github.com/headroom-dev/headroom/internal/controller/sensor"
	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// tierTarget grows and shrinks on whatever host it is given and
// remembers the order of the changes.
type tierTarget struct {
	target.Target
	changes []string
}

func (t *tierTarget) Nodes() []deploy.Node { return nil }

func (t *tierTarget) AddNode(_ context.Context, host string) (deploy.NodeChange, error) {
	t.changes = append(t.changes, "+"+host)
	now := time.Now()
	return deploy.NodeChange{Node: host, Host: host, Started: now, Done: now}, nil
}

func (t *tierTarget) RemoveNode(_ context.Context, node string) (deploy.NodeChange, error) {
	t.changes = append(t.changes, "-"+node)
	return deploy.NodeChange{Node: node, Host: node, Done: time.Now()}, nil
}

// twoTiers is a controller run over an application tier (app1) and a
// database tier (db1) on fake hosts, with a store for its decisions.
func twoTiers(t *testing.T, kind string, tiers []spec.ControllerTier) (*controllerRun, *tierTarget, *store.Store) {
	t.Helper()
	st, err := store.Create(filepath.Join(t.TempDir(), "r.db"), store.Campaign{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id, err := st.StartRun(store.Run{Treatment: "t", Model: "open", Level: 100, Repetition: 1})
	if err != nil {
		t.Fatal(err)
	}
	tgt := &tierTarget{}
	s := &spec.Spec{Interval: spec.Duration{Duration: time.Second}, Phases: spec.Phases{Measure: spec.Duration{Duration: time.Minute}}}
	s.Controller = &spec.Controller{Kind: kind, Period: spec.Duration{Duration: 5 * time.Second}, Tiers: tiers,
		Sensor: spec.ControllerSensor{Window: spec.Duration{Duration: 5 * time.Second}}}
	ex := &executor{s: s, st: st, tgt: tgt, prog: progress.Quiet(), hostMonOf: map[string]infra.Monitor{},
		setup: &Setup{Provider: &scalerProvider{}, Hosts: infra.Hosts{idleHost{name: "app1", typ: "appx"}, idleHost{name: "db1", typ: "dbx"}}}}
	cr, err := ex.prepareController(id)
	if err != nil {
		t.Fatal(err)
	}
	return cr, tgt, st
}

// seconds are n seconds up to now, each with 100 answers of d.
func seconds(now time.Time, n int, d time.Duration) []sensor.Second {
	var out []sensor.Second
	for i := n; i > 0; i-- {
		h := store.NewHistogram()
		for k := 0; k < 100; k++ {
			_ = h.RecordValue(d.Microseconds())
		}
		out = append(out, sensor.Second{Start: now.Add(-time.Duration(i) * time.Second), Hist: h})
	}
	return out
}

func cpuSamples(cr *controllerRun, now time.Time, host string, util float64) {
	for i := 1; i <= 5; i++ {
		cr.cpu[host] = append(cr.cpu[host], cpuAt{at: now.Add(-time.Duration(i) * time.Second), util: util})
	}
}

func lastDecision(t *testing.T, st *store.Store, id int64) runlog.Entry {
	t.Helper()
	evs, err := st.Events(id)
	if err != nil {
		t.Fatal(err)
	}
	var e runlog.Entry
	for _, ev := range evs {
		if ev.Kind == runlog.EventKind {
			if err := json.Unmarshal([]byte(ev.Detail), &e); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e
}

// The horizontal model of a controller of two tiers adds a node to the
// busier tier: with responses over the sensitive threshold, an empty ODS,
// the application tier at 40% CPU and the database tier at 90%, db2 comes
// up and the application tier stays as it is.
func TestTwoTierFallbackGrowsTheBusierTier(t *testing.T) {
	cr, tgt, st := twoTiers(t, "empirical", []spec.ControllerTier{{Hosts: "app", Max: 3}, {Hosts: "db", Max: 3}})
	now := time.Now()
	cr.seconds = seconds(now, 5, 800*time.Millisecond)
	cpuSamples(cr, now, "app1", 0.4)
	cpuSamples(cr, now, "db1", 0.9)
	cr.decide(context.Background(), now)
	if strings.Join(tgt.changes, " ") != "+db2" {
		t.Fatalf("changes %v, want +db2", tgt.changes)
	}
	e := lastDecision(t, st, cr.id)
	if e.Action != "fallback" || e.Tier != "db" || e.Nodes != 1 || e.Target != 2 || len(e.Tiers) != 2 ||
		e.Tiers[0] != (runlog.TierState{Tier: "app", Nodes: 1, Target: 1, Utilisation: 0.4}) || e.Tiers[1].Target != 2 {
		t.Errorf("decision %+v", e)
	}
	if got := cr.currentConfig(); got != "app=1,db=2" {
		t.Errorf("configuration after the action %q, want app=1,db=2", got)
	}
}

// The ODS's answer moves both tiers at once, the growing one first: from
// app=2,db=1 to app=1,db=2 the controller adds db2, then removes app2.
func TestTwoTierODSAnswerGrowsBeforeItShrinks(t *testing.T) {
	cr, tgt, st := twoTiers(t, "empirical", []spec.ControllerTier{{Hosts: "app", Max: 3}, {Hosts: "db", Max: 3}})
	cr.ex.setup.Hosts = append(cr.ex.setup.Hosts, idleHost{name: "app2", typ: "appx"})
	cr.refresh()
	now := time.Now()
	cr.seconds = seconds(now, 5, 800*time.Millisecond)
	for op := range cr.tput {
		delete(cr.tput, op)
	}
	// 40 records of app=1,db=2 serving 100 req/s within the SLA. On the
	// scale-up path only a dearer configuration than the running one
	// (three fake hosts at $4/h) is eligible: these cost $13/h.
	for i := 0; i < 40; i++ {
		cr.store.Append(ods.Record{Time: now.Add(-time.Hour + time.Duration(i)*time.Second), Config: "app=1,db=2", Cost: 13,
			Sensitive: 1, Normal: 1, Throughput: ods.Vector{"read": 100}, Source: "seed"})
	}
	cr.tput["read"] = make([]float64, 5)
	for i := range cr.tput["read"] {
		cr.tput["read"][i] = 100
	}
	cpuSamples(cr, now, "app1", 0.5)
	cpuSamples(cr, now, "app2", 0.5)
	cpuSamples(cr, now, "db1", 0.95)
	cr.decide(context.Background(), now)
	e := lastDecision(t, st, cr.id)
	if e.Action != "configure" || e.Config != "app=1,db=2" {
		t.Fatalf("decision %+v, want configure app=1,db=2", e)
	}
	if strings.Join(tgt.changes, " ") != "+db2 -app2" {
		t.Errorf("changes %v, want +db2 then -app2", tgt.changes)
	}
}

// The HPA baseline has one autoscaler per tier, each on its own CPU: at
// 95% against a 60% target the application tier goes to 2 (⌈1·0.95/0.6⌉),
// at 30% the database tier stays at its minimum.
func TestTwoTierHPAScalesEachTierOnItsOwnCPU(t *testing.T) {
	cr, tgt, st := twoTiers(t, "hpa", []spec.ControllerTier{{Hosts: "app", Max: 3}, {Hosts: "db", Max: 3}})
	now := time.Now()
	cpuSamples(cr, now, "app1", 0.95)
	cpuSamples(cr, now, "db1", 0.3)
	cr.decide(context.Background(), now)
	if strings.Join(tgt.changes, " ") != "+app2" {
		t.Fatalf("changes %v, want +app2", tgt.changes)
	}
	e := lastDecision(t, st, cr.id)
	if e.Action != "scale" || len(e.Tiers) != 2 || e.Tiers[0].Target != 2 || e.Tiers[1].Target != 1 ||
		!strings.HasPrefix(e.Reason, "app: ") || !strings.Contains(e.Reason, "; db: ") {
		t.Errorf("decision %+v", e)
	}
}

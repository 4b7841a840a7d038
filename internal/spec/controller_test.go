package spec

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const controllerSpec = `
name: ctl
lab:
  hosts:
    - {name: app1, type: small}
    - {name: db1, type: small}
target: {type: fake}
workload: {ycsb: a}
load:
  model: open
  schedule: {steps: [{rate: 50, for: 20s}, {rate: 150, for: 40s}]}
phases: {warmup: 1s, measure: 60s}
`

func TestControllerDefaultsAreTheSeeds(t *testing.T) {
	s, err := Parse("ctl.yaml", []byte(controllerSpec+"controller: {kind: empirical, tier: {hosts: app}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Controller
	if c.Period.Duration != 30*time.Second || c.Sensor.Window.Duration != 30*time.Second ||
		c.Sensor.Sensitive.Duration != 500*time.Millisecond || c.Sensor.Normal.Duration != time.Second ||
		c.ODS.Radius != 50 || c.ODS.MinSupport != 30 || c.ODS.MinSLA != 0.9 || c.ODS.Alpha != 0 ||
		c.Tier.Min != 1 || c.Tier.Max != 4 || c.HPA.Target != 0.6 || *c.HPA.Tolerance != 0.1 ||
		c.HPA.DownStabilization.Duration != 300*time.Second || c.HPA.Compression != 1 || c.HPA.SyncPeriod.Duration != 15*time.Second {
		t.Errorf("defaults: %+v", *c)
	}
}

func TestControllerTiersTakeTheirOwnDefaultsAndCapacities(t *testing.T) {
	s, err := Parse("ctl.yaml", []byte(controllerSpec+"controller: {kind: empirical, tiers: [{hosts: app, node_capacity: 150}, {hosts: db, max: 2}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Controller.ScaledTiers()
	want := []ControllerTier{{Hosts: "app", Min: 1, Max: 4, NodeCapacity: 150}, {Hosts: "db", Min: 1, Max: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tiers: got %+v, want %+v", got, want)
	}
	one, err := Parse("ctl.yaml", []byte(controllerSpec+"controller: {kind: hpa, node_capacity: 90, tier: {hosts: app}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := one.Controller.ScaledTiers(); len(got) != 1 || got[0].Hosts != "app" || got[0].NodeCapacity != 90 {
		t.Errorf("a single tier: got %+v, want app with controller.node_capacity 90", got)
	}
}

func TestControllerErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"controller: {kind: pid, tier: {hosts: app}}", "controller.kind"},
		{"controller: {kind: hpa}", "controller.tier.hosts"},
		{"controller: {kind: hpa, tier: {hosts: app, min: 3, max: 2}}", "controller.tier.min"},
		{"controller: {kind: hpa, period: 2m, tier: {hosts: app}}", "longer than the measured phase"},
		{"controller: {kind: hpa, tier: {hosts: app}, hpa: {target: 1.5}}", "controller.hpa.target"},
		{"controller: {kind: hpa, tier: {hosts: app}, hpa: {compression: 30}}", "controller.hpa.sync_period: 15s compressed 30 times is 500ms, shorter than the second"},
		{"controller: {kind: hpa, tier: {hosts: app}, hpa: {sync_period: 2m}}", "controller.hpa.sync_period: 2m0s compressed 1 times is 2m0s, longer than the measured phase"},
		{"controller: {kind: empirical, tier: {hosts: app}, sensor: {sensitive: 2s}}", "controller.sensor.sensitive"},
		{"controller: {kind: empirical, tier: {hosts: app}, ods: {stores: ['postgres://x/y']}}", "controller.ods.stores[0]"},
		{"controller: {kind: hpa, tier: {hosts: app}}\nevents: [{at: 5s, action: add_node, host: app2}]", "events[0].action"},
		{"controller: {kind: hpa, tier: {hosts: app}, tiers: [{hosts: db}]}", "controller.tier: the spec gives both tier and tiers"},
		{"controller: {kind: hpa, node_capacity: 100, tiers: [{hosts: app}, {hosts: db}]}", "controller.node_capacity"},
		{"controller: {kind: hpa, tiers: [{hosts: app}, {hosts: app}]}", "controller.tiers[1].hosts: \"app\" is also tiers[0].hosts"},
		{"controller: {kind: hpa, tiers: [{hosts: app}, {hosts: app1}]}", "controller.tiers[1].hosts: \"app1\" and tiers[0].hosts \"app\" name overlapping hosts"},
		{"controller: {kind: hpa, tiers: [{hosts: app}, {hosts: db, min: 2, max: 1}]}", "controller.tiers[1].min"},
		{"controller: {kind: hpa, tiers: [{hosts: app}, {hosts: db, node_capacity: -1}]}", "controller.tiers[1].node_capacity"},
	} {
		_, err := Parse("ctl.yaml", []byte(controllerSpec+tc.extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s", tc.extra, err, tc.want)
		}
	}
}

// A target whose own tier scales (apptier) takes add_node and remove_node
// events without managed.cluster; promote still needs a cluster, and
// other targets still refuse them.
func TestNodeEventsOnATargetThatScalesItsTier(t *testing.T) {
	base := `
name: tier-events
workload: {ycsb: c}
load: {model: open, rates: [10]}
phases: {measure: 10s}
events:
  - {at: 2s, action: add_node}
  - {at: 6s, action: remove_node, host: local2}
`
	if _, err := Parse("t.yaml", []byte("target: {type: tiered}"+base)); err != nil {
		t.Errorf("a tier that scales should take node events: %v", err)
	}
	_, err := Parse("t.yaml", []byte("target: {type: noop}"+base))
	if err == nil || !strings.Contains(err.Error(), "the target runs no cluster") {
		t.Errorf("a target without a cluster or tier: %v", err)
	}
	_, err = Parse("t.yaml", []byte("target: {type: tiered}"+base+"  - {at: 8s, action: promote, host: node2}\n"))
	if err == nil || !strings.Contains(err.Error(), "events[2].action") {
		t.Errorf("promote on a tier: %v", err)
	}
}

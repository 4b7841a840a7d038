package campaign

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/spec"
)

// probeAgentsSpec is a probe of the null target (no server: it answers at
// once) whose windows the agents send; %s is the spec's agents part.
const probeAgentsSpec = `
name: probe-agents
target: {type: null}
workload: {ycsb: c, record_count: 1000}
load: {model: open, arrival: poisson, rates: [100], max_in_flight: 64%s}
phases: {measure: 1s, populate: false}
monitor: {enabled: false}
output: out
%s
`

// probeWithAgents runs a probe of s from 200 req/s, one 2 s window per
// rate, capped at 400 req/s: the null target passes every window, so the
// probe holds 200 and 400 req/s and stops at the cap. It checks that each
// window's merged seconds hold the rate the agents were dealt out (a
// Poisson count of 2 x rate, within 5 standard deviations) and returns the
// result.
func probeWithAgents(t *testing.T, s *spec.Spec, o ProbeOptions) *probe.Result {
	t.Helper()
	ctx := context.Background()
	sess, err := NewSession(s, SessionOptions{Kind: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tr := Treatments(s)[0]
	su, err := sess.Open(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close()
	if _, err := su.Fill(ctx, nil); err != nil {
		t.Fatal(err)
	}
	cfg := probe.DefaultConfig()
	cfg.StartRate, cfg.Window, cfg.MaxRate, cfg.MaxWindows, cfg.BaselineWindow = 200, 2*time.Second, 400, 5, 0
	var notes []string
	o.Note = func(line string) { notes = append(notes, line) }
	res, err := su.Probe(ctx, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != probe.StopMaxRate || res.LowerBound != 400 || len(res.Windows) != 2 {
		t.Fatalf("stop %s, lower bound %v, %d windows; want the cap after 200 and 400 req/s (notes %q)", res.Stop, res.LowerBound, len(res.Windows), notes)
	}
	for _, w := range res.Windows {
		var done int64
		for _, sec := range w.Seconds {
			done += sec.Completed
		}
		want := 2 * w.Rate
		if math.Abs(float64(done)-want) > 5*math.Sqrt(want) || w.PassedSeconds != 2 {
			t.Errorf("window at %v req/s: %d requests in 2 s (want about %v), %d seconds passed", w.Rate, done, want, w.PassedSeconds)
		}
	}
	if !strings.Contains(strings.Join(notes, "\n"), "waiting for") {
		t.Errorf("no note of the agents connecting: %q", notes)
	}
	return res
}

// headroom probe with load.agents: two local agents send every window
// (seed 004's probe from several clients).
func TestProbeWithLocalAgents(t *testing.T) {
	dir := t.TempDir()
	bin := buildHeadroom(t, dir)
	s := parse(t, dir, fmt.Sprintf(probeAgentsSpec, ", agents: {hosts: [local, local], binary: "+bin+"}", ""))
	probeWithAgents(t, s, ProbeOptions{})
}

// headroom probe --agents k8s:2: the windows come from the pods of a
// Job (client-go's fake clientset, played by fakeCluster), which is
// deleted with its Secret when the probe ends.
func TestProbeWithKubernetesAgents(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, fmt.Sprintf(probeAgentsSpec, "", "kubernetes: {namespace: load, image: registry.example/headroom:test, coordinator: \"127.0.0.1:0\", start_timeout: 20s}"))
	fc := newFakeCluster(t)
	probeWithAgents(t, s, ProbeOptions{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	job := fc.onlyJob(t)
	if n := *job.Spec.Completions; n != 2 {
		t.Errorf("the Job has %d pods, want 2", n)
	}
	fc.assertGone(t, job)
}

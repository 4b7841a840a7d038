package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
)

// verifyAisle is examples/aisle-lab.yaml with its base treatment only
// (PostgreSQL on a 300-IOPS volume), shortened for CI as the pressure
// report's lab test does: less memory and data (reads still miss the
// cache), one rate far above what 300 IOPS serve, short phases, no SLO.
func verifyAisle(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile("../../examples/aisle-lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	m := func(v any, k string) map[string]any { return v.(map[string]any)[k].(map[string]any) }
	lb := m(doc, "lab")
	lb["name"] = "verify-aisle"
	lb["hosts"].([]any)[0].(map[string]any)["memory_mib"] = 96
	m(m(doc, "target"), "managed")["settings"] = map[string]any{"shared_buffers": "16MB"}
	m(doc, "workload")["record_count"] = 100000
	ld := m(doc, "load")
	ld["rates"], ld["max_in_flight"], ld["drop_after"], ld["late_after"] = []any{700}, 64, "50ms", "5ms"
	delete(doc, "slo")
	doc["phases"] = map[string]any{"warmup": "3s", "measure": "8s"}
	m(doc, "monitor")["processes"] = []any{}
	doc["treatments"] = []any{map[string]any{"name": "piops-300"}}
	doc["output"] = dir
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "aisle-verify.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// headroom assess --verify closes AISLE's loop on a real lab: the
// campaign measured PostgreSQL on a 300-IOPS volume only; --verify adds
// the recommended 1800-IOPS treatment to the same campaign, runs it into
// the same store, and says the recommendation paid, with the volume's
// ops/s pressure fallen. A second --verify runs nothing again.
func TestAssessVerifyOnLab(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := labtest.SearchableDir(t)
	db, out := runThenVerify(t, verifyAisle(t, dir))
	res := filepath.Dir(db)
	for _, want := range []string{"adding treatment piops-300-iops-1800", "raise the provisioned IOPS of db1's volume data from 300 to 1800", "Verdict: the recommendation paid"} {
		if !strings.Contains(out, want) {
			t.Errorf("assess --verify output lacks %q", want)
		}
	}
	r, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := len(r.CompletedRuns("piops-300-iops-1800")); got != 1 {
		t.Fatalf("the verifying treatment has %d completed runs in the same store, want 1", got)
	}
	if !strings.Contains(r.Campaign().SpecYAML, "piops-300-iops-1800") {
		t.Error("the stored spec does not name the verifying treatment")
	}
	a, err := assess.FromResults(r, assess.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := campaign.Compare(a, campaign.Change{Base: "piops-300", Name: "piops-300-iops-1800", Host: "db1", Service: "volume:data", Quality: esl.OpsPerS})
	if err != nil {
		t.Fatal(err)
	}
	if !(v.After.MeanSLP < 0.8*v.Before.MeanSLP) || v.After.StillPressed || !v.Paid {
		t.Errorf("verdict %+v", v)
	}
	out, _, code := headroom(t, "assess", "--verify", "-q", res)
	if code != 0 || !strings.Contains(out, "already measured by treatment piops-300-iops-1800") {
		t.Errorf("second --verify: exit %d\n%s", code, out)
	}
}

// assess --verify scales a tier out when the catalog has nothing larger
// (the designed cause): one application server at an eighth of an xlarge
// (the catalog's largest type; about 110 req/s at 4 ms of CPU a request)
// under 170 req/s holds its CPU at its limit. The verifying treatment
// runs two (lab.hosts[0].count: 2); the throughput rises and the most
// pressed server's CPU pressure falls. Whether that pays is the verdict's
// business (two servers cost more), so it is not asserted.
//
// The CPU work is most of a request's cost so that the margins hold on a
// slow machine: with 2 ms at a quarter of a vCPU, on a day this machine
// ran three times slower, each of the two servers spent 2.9 ms of CPU on
// a request at 80 req/s (the server's own overhead is larger below
// saturation) and its pressure fell only from 99.8% to 97%.
func TestAssessVerifyScaleOutOnLab(t *testing.T) {
	labtest.NeedServer(t, "postgres", "postgresql")
	dir := labtest.SearchableDir(t)
	path := filepath.Join(dir, "scale-out.yaml")
	src := `name: verify-scale-out
lab:
  name: verify-scaleout
  hosts:
    - {name: app, type: xlarge, vcpus: 0.5}
    - {name: db1, type: medium}
target:
  type: apptier
  db: {host: db1}
  app: {prefix: app, cpu_work: 4ms, pool: 8}
workload: {ycsb: c, record_count: 1000, request_distribution: uniform}
load: {model: open, rates: [170], max_in_flight: 64, timeout: 5s, drop_after: 200ms}
phases: {warmup: 3s, measure: 8s}
monitor: {processes: []}
treatments: [{name: one-app}]
output: ` + dir + "\n"
	v, _, _ := verifyScaleOut(t, path, src, "one-app", "app",
		"adding treatment one-app-nodes-2", "scale app out from 1 to 2 nodes", "app has the most vCPUs the catalog offers (4)", "most pressed node of app")
	if v.Before.Host != "app" || !strings.HasPrefix(v.After.Host, "app") || v.After.Host == "app" {
		t.Errorf("compared nodes %q and %q, want app and one of app1, app2", v.Before.Host, v.After.Host)
	}
	if !v.Before.StillPressed || !(v.After.MeanSLP < 0.95*v.Before.MeanSLP) || !(v.After.Throughput > 1.3*v.Before.Throughput) {
		t.Errorf("before %+v after %+v: want the pressure persistent before, lower after, and throughput up by 30%%", v.Before, v.After)
	}
}

// verifyScaleOut writes src to path, runs it and assess --verify
// (runThenVerify), checks the output holds every want, and compares
// treatment base with its scale-out base-nodes-2 by the CPU of the most
// pressed node of group. It returns the verdict, the results (closed at the
// end of the test) and the results database.
func verifyScaleOut(t *testing.T, path, src, base, group string, wants ...string) (campaign.Verdict, *results.Results, string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	db, out := runThenVerify(t, path)
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("assess --verify output lacks %q", want)
		}
	}
	r, err := results.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	a, err := assess.FromResults(r, assess.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := campaign.Compare(a, campaign.Change{Base: base, Name: base + "-nodes-2", Host: group, Group: group, Service: "cpu", Quality: esl.Quality(monitor.CPUUtilPct)})
	if err != nil {
		t.Fatal(err)
	}
	return v, r, db
}

// runThenVerify runs the campaign at path, then headroom assess --verify
// on its results; it returns the results database and --verify's output.
func runThenVerify(t *testing.T, path string) (db, out string) {
	t.Helper()
	out, errOut, code := headroom(t, "run", "-q", "--no-report", path)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	m := resultsDB.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no results path in output:\n%s", out)
	}
	out, errOut, code = headroom(t, "assess", "--verify", "-q", filepath.Dir(m[1]))
	t.Logf("assess --verify:\n%s", out)
	if code != 0 {
		t.Fatalf("assess --verify: exit %d\n%s\n%s", code, out, errOut)
	}
	return m[1], out
}

// assess --verify scales a managed Cassandra cluster out (the designed
// cause): one node on an xlarge host (the catalog's largest type) at a
// quarter of its vCPUs, under 7000 req/s of reads, holds its CPU at the
// limit. The offered rate is above what two such nodes serve, so that
// neither side is capped by the offered load (at 900 req/s the two nodes
// once were, at 952 ok/s; at 1800 req/s on the fast machine of
// 2026-12-03, at 1828). The verifying treatment sets lab.hosts[0].count
// and target.managed.cluster.nodes to 2 together. No level meets the SLO
// on either side, so the two are compared on their achieved throughput,
// and the verdict must follow from what was measured.
//
// How much a second node adds is Cassandra's, not Headroom's, and a JVM
// at a quarter of a core is not a steady server: one node served 280 to
// 714 req/s from run to run on a slow day of the development machine, and
// 1281 to 3189 on the fast one, where two fresh nodes served from 0.86 to
// 2.06 times what one fresh node did (15-60 s of warm-up; both JVMs were
// still compiling, and a second repetition minutes later ran 17% and 37%
// faster). So the test asks for no particular gain; it logs it. A second
// --verify runs nothing: the added treatment's own recommendation (4
// nodes) is a note, not another cluster.
func TestAssessVerifyCassandraScaleOutOnLab(t *testing.T) {
	labtest.NeedCassandra(t)
	dir := labtest.SearchableDir(t)
	path := filepath.Join(dir, "cass-scale-out.yaml")
	src := `name: verify-cassandra
seed: 7
lab:
  name: verify-cass
  populate_unthrottled: true
  hosts:
    - {name: cass, count: 1, type: xlarge, vcpus: 0.25}
target:
  type: cassandra
  consistency: ONE
  managed:
    cluster: {nodes: 1, hosts: cass, replication_factor: 1}
workload: {ycsb: c, record_count: 2000, field_count: 4, field_length: 50, request_distribution: uniform}
load: {model: open, arrival: poisson, rates: [7000], max_in_flight: 256, timeout: 5s, drop_after: 500ms}
phases: {warmup: 15s, measure: 10s}
slo: {percentile: 99, threshold: 50ms}
monitor: {processes: []}
treatments: [{name: one-node}]
output: ` + dir + "\n"
	v, r, db := verifyScaleOut(t, path, src, "one-node", "cass",
		"adding treatment one-node-nodes-2", "scale cass out from 1 to 2 nodes", "cass has the most vCPUs the catalog offers (4)", "achieved throughput (req/s)")
	if !v.Achieved || !v.Before.StillPressed {
		t.Errorf("verdict %+v: want both sides on achieved throughput and the node pressed before", v)
	}
	// The verdict from what was measured: each side's throughput is its
	// run's, the second xlarge doubles the lab's price, so a req/s costs
	// less, and the change paid, exactly when throughput more than doubled.
	for _, side := range []campaign.Side{v.Before, v.After} {
		runs := r.CompletedRuns(side.Treatment)
		if len(runs) != 1 || math.Abs(runs[0].Summary.Throughput-side.Throughput) > 0.05 {
			t.Errorf("%s: verdict throughput %.1f, runs %+v", side.Treatment, side.Throughput, runs)
		}
	}
	t.Logf("two nodes served %.2f times what one did", v.After.Throughput/v.Before.Throughput)
	monthly := func(s campaign.Side) float64 { return s.PerReqPerS * s.Throughput }
	if m := monthly(v.After) / monthly(v.Before); math.Abs(m-2) > 1e-6 {
		t.Errorf("the two-node lab costs %.4f times the one-node lab, want 2", m)
	}
	if paid := v.After.Throughput > 2*v.Before.Throughput; v.Paid != paid || strings.HasPrefix(v.Text, "the recommendation paid") != paid {
		t.Errorf("verdict paid %v (%q); throughput %.1f -> %.1f at twice the price says %v", v.Paid, v.Text, v.Before.Throughput, v.After.Throughput, paid)
	}
	if !strings.HasPrefix(v.After.Host, "cass") || v.After.Host == "cass" {
		t.Errorf("after the scale-out the most pressed node is %q, want cass1 or cass2", v.After.Host)
	}
	var set map[string]string
	for _, tr := range r.Treatments() {
		if tr.Name == "one-node-nodes-2" {
			set = map[string]string{}
			for _, x := range tr.Set {
				set[x.Path] = x.Value
			}
		}
	}
	if set["lab.hosts[0].count"] != "2" || set["target.managed.cluster.nodes"] != "2" {
		t.Errorf("the verifying treatment's settings %v", set)
	}
	out, _, code := headroom(t, "assess", "--verify", "-q", filepath.Dir(db))
	if code != 0 || !strings.Contains(out, "already measured by treatment one-node-nodes-2") || strings.Contains(out, "adding treatment") {
		t.Errorf("second --verify: exit %d\n%s", code, out)
	}
	if v.After.StillPressed && !strings.Contains(out, "one-node-nodes-2: an earlier assess --verify added it") {
		t.Errorf("second --verify does not say why the still-pressed one-node-nodes-2 is not scaled out again:\n%s", out)
	}
}

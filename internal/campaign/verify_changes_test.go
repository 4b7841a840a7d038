package campaign

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"

	_ "github.com/headroom-dev/headroom/internal/target/apptier"
	_ "github.com/headroom-dev/headroom/internal/target/cassandra"
	_ "github.com/headroom-dev/headroom/internal/target/postgres"
)

// clusterSpec is examples/cassandra-scaling.yaml's shape: a 4-node
// Cassandra cluster on lab hosts cass1..cass4 at a tenth of a medium's
// vCPU, with an 8-node treatment already in the campaign.
const clusterSpec = `
name: verify-scale
lab:
  hosts:
    - {name: cass, count: 4, type: medium, vcpus: 0.1}
target:
  type: cassandra
  managed:
    cluster: {nodes: 4, hosts: cass, replication_factor: 2}
workload: {ycsb: b, record_count: 1000}
load: {model: open, rates: [100]}
phases: {warmup: 1s, measure: 5s}
treatments:
  - name: 4-small
  - name: 8-small
    set:
      lab.hosts[0].count: 8
      target.managed.cluster.nodes: 8
`

func parseSpec(t *testing.T, src string) *spec.Spec {
	t.Helper()
	s, err := spec.Parse("verify.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pressedCPU is a treatment whose hosts' CPUs (each at vcpus of a type
// priced price) are under persistent pressure, with types the catalog.
func pressedCPU(name string, hosts []string, typ string, vcpus float64, types ...results.InstanceType) assess.Treatment {
	t := assess.Treatment{Name: name, Lab: &results.Lab{Catalog: &results.Catalog{InstanceTypes: types}}}
	for _, h := range hosts {
		t.Lab.Hosts = append(t.Lab.Hosts, results.HostLimits{Host: h, Type: typ, VCPUs: vcpus})
		t.Subjects = append(t.Subjects, assess.Subject{Host: h, Service: "cpu", Resource: monitor.ResourceCPU, Quality: cpuQ})
		t.Findings = append(t.Findings, assess.Finding{Finding: slp.Finding{Host: h, Service: "cpu", Quality: cpuQ, Class: slp.ProvisionMore}})
	}
	return t
}

// cpuQ is the quality the pressure analysis gives a lab host's CPU.
var cpuQ = esl.Quality(monitor.CPUUtilPct)

var (
	medium = results.InstanceType{Name: "medium", VCPUs: 1, PricePerHour: 0.18}
	large  = results.InstanceType{Name: "large", VCPUs: 2, PricePerHour: 0.36}
	xlarge = results.InstanceType{Name: "xlarge", VCPUs: 4, PricePerHour: 0.72}
)

func settingsMap(set []results.Setting) map[string]string {
	m := map[string]string{}
	for _, x := range set {
		m[x.Path] = x.Value
	}
	return m
}

// A host that runs at a fraction of its type's vCPUs moves to the
// cheapest larger type at the same fraction (0.1 of medium's 1 vCPU is
// 0.2 of large's 2), the cheapest larger than its type, not than its
// fraction: the verifying treatment is what cost.Action words.
func TestVerifyScaleUpKeepsTheHostsFraction(t *testing.T) {
	s := parseSpec(t, clusterSpec)
	tr := pressedCPU("4-small", []string{"cass1", "cass2", "cass3", "cass4"}, "medium", 0.1, xlarge, medium, large)
	changes, notes, err := VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, s)
	if err != nil || len(notes) != 0 {
		t.Fatalf("err %v notes %v", err, notes)
	}
	if len(changes) != 1 {
		t.Fatalf("four pressed nodes of one entry make one change, got %d: %+v", len(changes), changes)
	}
	ch := changes[0]
	got := settingsMap(ch.Set)
	if got["lab.hosts[0].type"] != "large" || got["lab.hosts[0].vcpus"] != "0.2" || len(got) != 2 {
		t.Fatalf("settings %v, want type large at vcpus 0.2", got)
	}
	if ch.Name != "4-small-type-large" || ch.Existing || ch.Group != "" {
		t.Fatalf("change %+v", ch)
	}
	if !strings.Contains(ch.What, "keeping the host's 0.1 of its type's vCPUs: 0.2") {
		t.Errorf("what: %s", ch.What)
	}
}

// At the top of the catalog a cluster's pressure is verified by twice the
// nodes: the lab count and the cluster's nodes together. The campaign
// already measured that (8-small), so nothing new runs.
func TestVerifyScaleOutAtTheCatalogsTop(t *testing.T) {
	s := parseSpec(t, clusterSpec)
	tr := pressedCPU("4-small", []string{"cass1", "cass2", "cass3", "cass4"}, "medium", 0.1, medium)
	changes, notes, err := VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, s)
	if err != nil || len(notes) != 0 || len(changes) != 1 {
		t.Fatalf("changes %+v, notes %v, err %v", changes, notes, err)
	}
	ch := changes[0]
	got := settingsMap(ch.Set)
	if got["lab.hosts[0].count"] != "8" || got["target.managed.cluster.nodes"] != "8" || len(got) != 2 {
		t.Fatalf("settings %v", got)
	}
	if !ch.Existing || ch.Name != "8-small" || ch.Group != "cass" {
		t.Fatalf("change %+v, want the existing 8-small of group cass", ch)
	}
	if !strings.Contains(ch.What, "scale cass out from 4 to 8 nodes") || !strings.Contains(ch.What, "cass1 has the most vCPUs the catalog offers (1)") {
		t.Errorf("what: %s", ch.What)
	}

	// Without the 8-node treatment, one is added, and the spec with it
	// validates (what Verify writes back).
	noEight := strings.Split(clusterSpec, "  - name: 8-small")[0]
	s = parseSpec(t, noEight)
	changes, _, err = VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, s)
	if err != nil || len(changes) != 1 || changes[0].Existing || changes[0].Name != "4-small-nodes-8" {
		t.Fatalf("changes %+v, err %v", changes, err)
	}
	src, added, err := addToSpec([]byte(noEight), changes, false)
	if err != nil || added != 1 {
		t.Fatal(added, err)
	}
	ns := parseSpec(t, string(src))
	last := ns.Treatments[len(ns.Treatments)-1]
	if last.Name != "4-small-nodes-8" || len(last.Spec.Lab.Hosts) != 1 || last.Spec.Lab.Hosts[0].Count != 8 {
		t.Fatalf("the added treatment %s has hosts %+v", last.Name, last.Spec.Lab.Hosts)
	}

	// The next --verify compares the added treatment but does not scale it
	// out in turn, even under pressure: a note says how to measure it.
	if got := addedByVerify(src); len(got) != 1 || !got["4-small-nodes-8"] {
		t.Fatalf("added by verify: %v", got)
	}
	var eight []string
	for i := 1; i <= 8; i++ {
		eight = append(eight, "cass"+strconv.Itoa(i))
	}
	both := []assess.Treatment{tr, pressedCPU("4-small-nodes-8", eight, "medium", 0.1, medium)}
	changes, notes, err = verifyChanges(nil, &assess.Assessment{Treatments: both}, ns, src)
	if err != nil || len(changes) != 1 || changes[0].Name != "4-small-nodes-8" || !changes[0].Existing {
		t.Fatalf("changes %+v, err %v", changes, err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "4-small-nodes-8: an earlier assess --verify added it") || !strings.Contains(notes[0], "scale cass out from 8 to 16 nodes") {
		t.Errorf("notes %q", notes)
	}
}

// A cluster at the most nodes a managed cluster may have, and a single
// server at the catalog's top, cannot be verified: one note each saying
// why neither step applies.
func TestVerifyNotesWhenNeitherStepApplies(t *testing.T) {
	full := strings.NewReplacer("count: 4", "count: 16", "nodes: 4", "nodes: 16").Replace(strings.Split(clusterSpec, "  - name: 8-small")[0])
	s := parseSpec(t, full)
	var hosts []string
	for i := 1; i <= 16; i++ {
		hosts = append(hosts, "cass"+strconv.Itoa(i))
	}
	tr := pressedCPU("4-small", hosts, "medium", 0.1, medium)
	changes, notes, err := VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, s)
	if err != nil || len(changes) != 0 || len(notes) != 16 {
		t.Fatalf("changes %+v, %d notes, err %v", changes, len(notes), err)
	}
	if !strings.Contains(notes[0], "nor can the host's tier scale out: the tier already has 16 nodes") {
		t.Errorf("note: %s", notes[0])
	}

	single := parseSpec(t, `
name: verify-single
lab:
  hosts: [{name: db1, type: xlarge}]
target: {type: postgres, managed: {host: db1}}
workload: {ycsb: b, record_count: 1000}
load: {model: open, rates: [100]}
phases: {warmup: 1s, measure: 5s}
treatments: [{name: base}]
`)
	tr = pressedCPU("base", []string{"db1"}, "xlarge", 4, medium, xlarge)
	_, notes, _ = VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, single)
	if len(notes) != 1 || !strings.Contains(notes[0], "db1 has the most vCPUs the catalog offers (4); nor can the host's tier scale out: no tier of the postgres target runs on lab.hosts[0] (db1)") {
		t.Fatalf("notes %v", notes)
	}
}

// The apptier target's application servers follow a host name prefix:
// scaling them out changes the lab count only, and a single host becomes
// two numbered ones.
func TestVerifyScaleOutAnApplicationTier(t *testing.T) {
	s := parseSpec(t, `
name: verify-apps
lab:
  hosts:
    - {name: app, type: xlarge}
    - {name: db1, type: large}
target:
  type: apptier
  db: {host: db1}
  app: {prefix: app, cpu_work: 1ms}
workload: {ycsb: b, record_count: 1000}
load: {model: open, rates: [100]}
phases: {warmup: 1s, measure: 5s}
treatments: [{name: base}]
`)
	tr := pressedCPU("base", []string{"app"}, "xlarge", 4, large, xlarge)
	changes, notes, err := VerifyChanges(nil, &assess.Assessment{Treatments: []assess.Treatment{tr}}, s)
	if err != nil || len(notes) != 0 || len(changes) != 1 {
		t.Fatalf("changes %+v notes %v err %v", changes, notes, err)
	}
	got := settingsMap(changes[0].Set)
	if got["lab.hosts[0].count"] != "2" || len(got) != 1 || changes[0].Name != "base-nodes-2" {
		t.Fatalf("settings %v, name %s", got, changes[0].Name)
	}
	if !strings.Contains(changes[0].What, "scale app out from 1 to 2 nodes (hosts app1 to app2): app has the most vCPUs the catalog offers (4)") {
		t.Errorf("what: %s", changes[0].What)
	}
}

// A scale-out is judged by each side's most pressed node of the group:
// before, cass2 at 97%; after, cass7 at 55% with no persistent pressure
// and more throughput, so (without prices) it paid.
func TestCompareAScaleOutByItsMostPressedNode(t *testing.T) {
	side := func(name string, means map[string]float64, throughput float64, pressed bool) assess.Treatment {
		t := assess.Treatment{Name: name, Throughput: throughput}
		for h, m := range means {
			sub := assess.Subject{Host: h, Service: "cpu", Quality: cpuQ}
			sub.Summary.Box.Mean, sub.Summary.Box.P99 = m, math.Min(100, m+5)
			t.Subjects = append(t.Subjects, sub)
			if pressed {
				t.Findings = append(t.Findings, assess.Finding{Finding: slp.Finding{Host: h, Service: "cpu", Quality: cpuQ, Class: slp.ProvisionMore}})
			}
		}
		// Another service of the same hosts does not count.
		t.Subjects = append(t.Subjects, assess.Subject{Host: "cass1", Service: "net:eth0", Quality: cpuQ})
		t.Subjects[len(t.Subjects)-1].Summary.Box.Mean = 99
		return t
	}
	a := &assess.Assessment{Treatments: []assess.Treatment{
		side("4-small", map[string]float64{"cass1": 90, "cass2": 97, "cass3": 92, "cass4": 88}, 400, true),
		side("8-small", map[string]float64{"cass1": 40, "cass2": 50, "cass3": 45, "cass4": 41, "cass5": 52, "cass6": 48, "cass7": 55, "cass8": 44}, 720, false),
	}}
	v, err := Compare(a, Change{Base: "4-small", Name: "8-small", Host: "cass3", Group: "cass", Service: "cpu", Quality: cpuQ})
	if err != nil {
		t.Fatal(err)
	}
	if v.Before.Host != "cass2" || v.Before.MeanSLP != 97 || v.After.Host != "cass7" || v.After.MeanSLP != 55 {
		t.Fatalf("before %+v after %+v", v.Before, v.After)
	}
	if !v.Before.StillPressed || v.After.StillPressed || !v.Paid || !strings.HasPrefix(v.Text, "the recommendation paid") {
		t.Fatalf("verdict %+v", v)
	}
}

// In a campaign made from factors: a change is a new level of the factor
// it sets. Scaling one application server out to two is the campaign's
// own apps-2; scaling two out to four adds level 4 (treatment apps-4); a
// change to a field no factor sets is a note.
func TestVerifyAFactorCampaign(t *testing.T) {
	src := `
name: verify-factors
lab:
  hosts:
    - {name: app, count: 1, type: xlarge, vcpus: 0.25}
    - {name: db1, type: medium}
target:
  type: apptier
  db: {host: db1}
  app: {prefix: app, cpu_work: 1ms}
workload: {ycsb: b, record_count: 1000}
load: {model: open, rates: [100]}
phases: {warmup: 1s, measure: 5s}
factors:
  # how many application servers
  - path: lab.hosts[0].count
    name: apps
    values: [1, 2]
`
	s := parseSpec(t, src)
	if len(s.Treatments) != 2 || s.Treatments[0].Name != "apps-1" {
		t.Fatalf("treatments %+v", s.Treatments)
	}
	a := &assess.Assessment{Treatments: []assess.Treatment{
		pressedCPU("apps-1", []string{"app"}, "xlarge", 0.25, medium, xlarge),
		pressedCPU("apps-2", []string{"app1", "app2"}, "xlarge", 0.25, medium, xlarge),
	}}
	// db1's CPU too, at medium: a larger type is no factor's value.
	db := pressedCPU("apps-2", []string{"db1"}, "medium", 1, medium, xlarge)
	a.Treatments[1].Lab.Hosts = append(a.Treatments[1].Lab.Hosts, db.Lab.Hosts...)
	a.Treatments[1].Subjects = append(a.Treatments[1].Subjects, db.Subjects...)
	a.Treatments[1].Findings = append(a.Treatments[1].Findings, db.Findings...)

	changes, notes, err := verifyChanges(nil, a, s, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || !changes[0].Existing || changes[0].Name != "apps-2" || changes[1].Existing || changes[1].Name != "apps-4" {
		t.Fatalf("changes %+v", changes)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "sets lab.hosts[1].type, which is not one of the campaign's factors") {
		t.Fatalf("notes %v", notes)
	}
	grown, added, err := addToSpec([]byte(src), changes, true)
	if err != nil || added != 1 {
		t.Fatal(added, err)
	}
	ns := parseSpec(t, string(grown))
	if got := ns.Factors[0].Values; strings.Join(got, ",") != "1,2,4" {
		t.Fatalf("factor values %v, want 1,2,4", got)
	}
	if !strings.Contains(string(grown), "# how many application servers") || !strings.Contains(string(grown), "level 4 added by headroom assess --verify: scale app out from 2 to 4 nodes") {
		t.Errorf("the grown spec lost its comment or lacks the new one:\n%s", grown)
	}
}

// Hosts that differ (application servers and a database) have no priced
// deployment in the pressure analysis; the verdict then prices both sides
// at the whole lab's price (client excluded): one xlarge app host and a
// medium database, $0.90/h, at 100 req/s is $6.57 a month per req/s; two
// app hosts, $1.62/h, at 150 req/s is $7.88: throughput rose 50%, the
// price 80%, so it did not pay.
func TestCompareAtTheWholeLabsPrice(t *testing.T) {
	side := func(name string, apps int, throughput float64) assess.Treatment {
		tr := assess.Treatment{Name: name, Throughput: throughput, Lab: &results.Lab{}}
		for i := 1; i <= apps; i++ {
			tr.Lab.Hosts = append(tr.Lab.Hosts, results.HostLimits{Host: "app" + strconv.Itoa(i), PricePerHour: 0.72})
		}
		tr.Lab.Hosts = append(tr.Lab.Hosts, results.HostLimits{Host: "db1", PricePerHour: 0.18, Volumes: []results.VolumeLimit{{Name: "data", MonthlyPrice: 0}}},
			results.HostLimits{Host: "client", PricePerHour: 5})
		tr.Subjects = []assess.Subject{{Host: "app1", Service: "cpu", Quality: cpuQ}}
		return tr
	}
	a := &assess.Assessment{Treatments: []assess.Treatment{side("one", 1, 100), side("two", 2, 150)}}
	v, err := Compare(a, Change{Base: "one", Name: "two", Host: "app1", Group: "app", Service: "cpu", Quality: cpuQ})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(v.Before.PerReqPerS-0.90*730/100) > 1e-9 || math.Abs(v.After.PerReqPerS-1.62*730/150) > 1e-9 || v.Paid {
		t.Fatalf("before %+v after %+v paid %v", v.Before, v.After, v.Paid)
	}
	if !strings.Contains(v.Text, "did not pay: throughput rose 50%, less than the price of the deployment did") || !strings.Contains(v.Text, "(the whole lab's price: every host and volume)") {
		t.Errorf("text: %s", v.Text)
	}
}

// When no level met the SLO on a side, that side has no capacity: both
// sides are then compared on their highest achieved throughput, and the
// verdict says so. One xlarge Cassandra node at 0.72 $/h achieving 277
// req/s, two achieving 560: 525.6/277 and 1051.2/560 $/month per req/s (paid:
// 1.90 -> 1.88).
func TestCompareOnAchievedThroughputWithoutCapacity(t *testing.T) {
	side := func(name string, nodes int, capacity, achieved float64) assess.Treatment {
		tr := assess.Treatment{Name: name, Throughput: capacity, Achieved: achieved, Lab: &results.Lab{}}
		for i := 1; i <= nodes; i++ {
			h := "cass" + strconv.Itoa(i)
			tr.Lab.Hosts = append(tr.Lab.Hosts, results.HostLimits{Host: h, PricePerHour: 0.72})
			sub := assess.Subject{Host: h, Service: "cpu", Quality: cpuQ}
			sub.Summary.Box.Mean, sub.Summary.Box.P99 = 100, 102
			tr.Subjects = append(tr.Subjects, sub)
		}
		return tr
	}
	for _, c := range []struct {
		name           string
		capacityBefore float64
	}{{"no capacity on either side", math.NaN()}, {"capacity before only", 200}} {
		a := &assess.Assessment{Treatments: []assess.Treatment{side("one", 1, c.capacityBefore, 277), side("two", 2, math.NaN(), 560)}}
		v, err := Compare(a, Change{Base: "one", Name: "two", Host: "cass1", Group: "cass", Service: "cpu", Quality: cpuQ})
		if err != nil {
			t.Fatal(err)
		}
		if !v.Achieved || v.Before.Throughput != 277 || v.After.Throughput != 560 {
			t.Fatalf("%s: achieved %v, throughput %v -> %v", c.name, v.Achieved, v.Before.Throughput, v.After.Throughput)
		}
		want := []float64{0.72 * 730 / 277, 2 * 0.72 * 730 / 560}
		if math.Abs(v.Before.PerReqPerS-want[0]) > 1e-9 || math.Abs(v.After.PerReqPerS-want[1]) > 1e-9 || !v.Paid {
			t.Fatalf("%s: $/month per req/s %v -> %v (want %v), paid %v", c.name, v.Before.PerReqPerS, v.After.PerReqPerS, want, v.Paid)
		}
		if !strings.Contains(v.Text, "throughput 277.0 -> 560.0 req/s (achieved throughput: no level met the SLO on one side or both)") {
			t.Errorf("%s: text %s", c.name, v.Text)
		}
	}
}

// An open loop cannot show more throughput than it offers: a change whose
// treatment served the offered rate is not said to have failed to raise it.
func TestCompareWhenTheChangeServedTheOfferedRate(t *testing.T) {
	side := func(name string, achieved float64) assess.Treatment {
		tr := assess.Treatment{Name: name, Throughput: math.NaN(), Achieved: achieved, AchievedLevel: 600, OpenLoop: true,
			Lab: &results.Lab{Hosts: []results.HostLimits{{Host: "cass1", PricePerHour: 0.72}}}}
		tr.Subjects = []assess.Subject{{Host: "cass1", Service: "cpu", Quality: cpuQ}}
		return tr
	}
	a := &assess.Assessment{Treatments: []assess.Treatment{side("two", 619.5), side("four", 599.8)}}
	v, err := Compare(a, Change{Base: "two", Name: "four", Host: "cass1", Group: "cass", Service: "cpu", Quality: cpuQ})
	if err != nil {
		t.Fatal(err)
	}
	if v.Paid || v.After.Offered != 600 || !strings.HasPrefix(v.Text, "the recommendation did not pay as measured: throughput could not rise, four served the offered 600 req/s; add higher rates") {
		t.Errorf("paid %v, offered %v, text %s", v.Paid, v.After.Offered, v.Text)
	}
	// Closed loop: a level is a client count, not a rate.
	for i := range a.Treatments {
		a.Treatments[i].OpenLoop = false
	}
	if v, _ := Compare(a, Change{Base: "two", Name: "four", Host: "cass1", Group: "cass", Service: "cpu", Quality: cpuQ}); !strings.HasPrefix(v.Text, "the recommendation did not pay: throughput did not rise") {
		t.Errorf("closed loop: %s", v.Text)
	}
}

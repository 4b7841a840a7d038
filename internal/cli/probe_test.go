package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/probe"
	"github.com/headroom-dev/headroom/internal/report/rigor"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// limitedServer serves at most rate requests per second: each request
// takes the next free slot of a 1/rate grid and waits for it, so requests
// beyond the capacity queue and their latency grows (a token bucket of
// depth one with an unbounded FIFO queue).
func limitedServer(t *testing.T, rate float64) *httptest.Server {
	var mu sync.Mutex
	var next time.Time
	gap := time.Duration(float64(time.Second) / rate)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		slot := next
		if slot.Before(now) {
			slot = now
		}
		next = slot.Add(gap)
		mu.Unlock()
		time.Sleep(time.Until(slot))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

// webSpec is a spec that probes the http server at url, with more
// (sections of its own) at its end.
func webSpec(url, more string) string {
	return fmt.Sprintf(`name: web
target: {type: http, base_url: %q, read: {path: "/kv/{key}"}}
workload: {ycsb: c, record_count: 1000}
load: {model: open, rates: [1]}
phases: {populate: false}
`, url) + more
}

// probeWeb writes src as the spec file dir/web.yaml and probes it in
// process with args after the spec's path, the results going to dir/out;
// a non-zero exit fails the test. It returns what the probe printed.
func probeWeb(t *testing.T, dir, src string, args ...string) (stdout, stderr string) {
	t.Helper()
	specPath := writeFile(t, dir, "web.yaml", src)
	var out, errOut bytes.Buffer
	code := Main(append(append([]string{"probe", specPath}, args...), "-o", filepath.Join(dir, "out")), &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	return out.String(), errOut.String()
}

var estimateLine = regexp.MustCompile(`estimate: (\S+) req/s at p90 <= 150ms \((\d+) windows\)`)

// The real probe, end to end: the http target against a server of 400
// req/s, 2 s windows from 100 req/s. The estimate must land within 15% of
// the designed capacity, and every window and second must be stored.
func TestProbeFindsHTTPServerCapacity(t *testing.T) {
	srv := limitedServer(t, 400)
	out, errOut := probeWeb(t, t.TempDir(), webSpec(srv.URL, ""), "--start-rate", "100", "--window", "2s", "--baseline-rate", "20", "--baseline-window", "1s")
	t.Log("\n" + out)
	m := estimateLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no estimate:\n%s\n%s", out, errOut)
	}
	est, _ := strconv.ParseFloat(m[1], 64)
	if math.Abs(est-400) > 0.15*400 {
		t.Fatalf("estimate %v req/s is not within 15%% of 400:\n%s", est, out)
	}
	st := openResults(t, out)
	ps, err := st.Probes()
	if err != nil || len(ps) != 1 {
		t.Fatalf("probes %v %v", ps, err)
	}
	p := ps[0]
	host := strings.TrimPrefix(srv.URL, "http://")
	if p.Status != store.StatusCompleted || p.Stop != probe.StopSLA || p.Estimate != est || p.RTTAddr != host ||
		math.IsNaN(p.BaselineRTTUs) || p.SLAPercentile != 90 || p.SLAThreshold != 150*time.Millisecond {
		t.Fatalf("probe row %+v", p)
	}
	ws, err := st.ProbeWindows(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(m[2])
	if len(ws) != n || n < 4 || ws[0].Rate != 100 || ws[1].Rate != 200 {
		t.Fatalf("%d windows stored, %d printed; first rates %v", len(ws), n, ws[0].Rate)
	}
	last := ws[len(ws)-1]
	if last.Verdict != "missed SLA" || last.Phase != probe.PhaseFineTune || last.MetSLA {
		t.Fatalf("last window %+v", last)
	}
	// The probe records what it probed, as a campaign does.
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	if ts := r.Treatments(); len(ts) != 1 || ts[0].Name != "" || ts[0].Target.Type != "http" || ts[0].Target.Address != host {
		t.Fatalf("treatment facts %+v", ts)
	}
	for _, w := range ws {
		if len(w.Seconds) != 2 || w.Hist.TotalCount() != w.Completed || w.Sent != w.Completed+w.Errors || math.IsNaN(w.RTTBeforeUs) {
			t.Fatalf("window %d: %d seconds, hist %d, completed %d, rtt %v", w.Seq, len(w.Seconds), w.Hist.TotalCount(), w.Completed, w.RTTBeforeUs)
		}
		var sent int64
		for _, s := range w.Seconds {
			sent += s.Sent
		}
		if sent != w.Sent {
			t.Fatalf("window %d: seconds sum to %d sent, window %d", w.Seq, sent, w.Sent)
		}
	}
}

// poolServer is an HTTP server of k workers, each taking exactly service
// per request, first come first served: its capacity is k / service by
// construction. A request is given the worker that frees first and a
// finish time of max(arrival, that worker's free time) + service, then
// sleeps until it; the finish times are computed, not slept in turn, so
// the sleeps' own lateness does not accumulate into a lower capacity.
// Below capacity (with constant arrivals) every request takes service;
// above it the backlog grows by rate - k/service requests per second.
func poolServer(t *testing.T, k int, service time.Duration) *httptest.Server {
	var mu sync.Mutex
	free := make([]time.Time, k)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		first := 0
		for i := range free {
			if free[i].Before(free[first]) {
				first = i
			}
		}
		start := free[first]
		if start.Before(now) {
			start = now
		}
		done := start.Add(service)
		free[first] = done
		mu.Unlock()
		time.Sleep(time.Until(done))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(s.Close)
	return s
}

// constantSpec is webSpec with constant arrivals: with evenly spaced
// requests a pool server has no queue below its capacity and a backlog
// growing linearly above it, so the right answer is exact.
func constantSpec(url string) string {
	return strings.Replace(webSpec(url, ""), "load: {model: open, rates: [1]}", "load: {model: open, arrival: constant, rates: [1]}", 1)
}

var baselineLine = regexp.MustCompile(`baseline: (\S+) median, \S+ p90 unloaded \((\d+) requests at 2 req/s over 5s\), RTT (\S+)`)

// Issue 14: against a server whose unloaded service time is 10 ms, seed
// 004's pass rule (median <= RTT + 10 ms) rejected every window down to the
// floor. A pool of 5 workers of 10 ms serves 500 req/s by construction.
// With the default rule parameters (baseline, margin, fine rate, SLA
// p90 <= 150 ms, start 800 req/s; only the windows are 5 s instead of 10 s
// to keep the test near 40 s) the probe measures about 10 ms unloaded,
// judges seconds against RTT + that + 10 ms, and its estimate must lie
// within 15% of 500 req/s. (800 is rejected, 400 accepted, fine-tuning
// meets the SLA at 400 and 480 and misses it at 560: 480.)
func TestProbeFindsCapacityOfSlowServer(t *testing.T) {
	srv := poolServer(t, 5, 10*time.Millisecond)
	out, errOut := probeWeb(t, t.TempDir(), constantSpec(srv.URL), "--window", "5s")
	t.Log("\n" + out)
	m := estimateLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no estimate:\n%s\n%s", out, errOut)
	}
	est, _ := strconv.ParseFloat(m[1], 64)
	if math.Abs(est-500) > 0.15*500 {
		t.Fatalf("estimate %v req/s is not within 15%% of 500:\n%s", est, out)
	}
	// The output says the baseline and the RTT before the first window.
	b := baselineLine.FindStringSubmatch(out)
	if b == nil || strings.Index(out, "baseline:") > strings.Index(out, "ramp-up") || !strings.Contains(out, "a second passes when its median <= the RTT before its window + ") {
		t.Fatalf("no baseline line before the windows:\n%s", out)
	}
	if !strings.Contains(out, "baseline RTT: ") || !strings.Contains(out, "baseline latency: ") {
		t.Fatalf("the result lacks the baseline RTT or latency:\n%s", out)
	}
	st := openResults(t, out)
	ps, err := st.Probes()
	if err != nil || len(ps) != 1 || ps[0].Baseline == nil {
		t.Fatalf("probes %+v %v", ps, err)
	}
	p, base := ps[0], ps[0].Baseline
	// Unloaded: the 10 ms of service and the HTTP round trip on loopback.
	if base.LatencyUs < 10000 || base.LatencyUs > 15000 || base.Rate != 2 || base.Completed < 5 || base.Hist.TotalCount() != base.Completed ||
		base.RTTUs != p.BaselineRTTUs || math.Abs(base.UnloadedUs-(base.LatencyUs-base.RTTUs)) > 0.01 {
		t.Fatalf("baseline %+v (rtt %v)", *base, p.BaselineRTTUs)
	}
	ws, err := st.ProbeWindows(p.ID)
	if err != nil || len(ws) < 4 {
		t.Fatalf("windows %d %v", len(ws), err)
	}
	for _, w := range ws {
		if want := w.RTTBeforeUs + base.UnloadedUs + 10000; math.Abs(w.LimitUs-want) > 0.01 {
			t.Fatalf("window %d limit %v µs, want %v", w.Seq, w.LimitUs, want)
		}
		if w.Trend.Judged {
			t.Fatalf("window %d of 5 s was judged for a trend (7 s needed): %+v", w.Seq, w.Trend)
		}
	}
	if ws[0].Rate != 800 || ws[0].Accepted || ws[1].Rate != 400 || !ws[1].Accepted {
		t.Fatalf("first windows %v %v / %v %v", ws[0].Rate, ws[0].Verdict, ws[1].Rate, ws[1].Verdict)
	}
}

// Headroom's unstable-queue rule end to end. The pool of 2 workers of
// 10 ms serves 200 req/s. From 120 req/s with fine steps of 0.75 x 120 =
// 90 and an SLA of p90 <= 500 ms, 7 s windows: 120 is accepted (240 is
// rejected), fine-tuning meets the SLA at 120, then holds 210 req/s, 5%
// over the capacity: its backlog grows by 10 requests, 50 ms of latency,
// every second, so by the window's end a request waits about 350 ms and
// the window's p90 (about 320 ms) is within the SLA. Seed 004's rule would
// accept it and estimate 210 or more, above the capacity; the probe calls
// it an unstable queue and estimates 120.
func TestProbeFlagsUnstableQueue(t *testing.T) {
	srv := poolServer(t, 2, 10*time.Millisecond)
	out, errOut := probeWeb(t, t.TempDir(), constantSpec(srv.URL),
		"--start-rate", "120", "--fine-rate", "0.75", "--window", "7s", "--threshold", "500ms")
	t.Log("\n" + out)
	if !regexp.MustCompile(`estimate: 120 req/s at p90 <= 500ms`).MatchString(out) {
		t.Fatalf("want an estimate of 120 req/s:\n%s\n%s", out, errOut)
	}
	if !regexp.MustCompile(`fine-tune\s+210 .* unstable queue \(latency rising [0-9.]+ ms/s\)`).MatchString(out) ||
		!strings.Contains(out, "the queue grew through the window") {
		t.Fatalf("the window at 210 req/s is not called an unstable queue:\n%s", out)
	}
	st := openResults(t, out)
	ps, _ := st.Probes()
	ws, err := st.ProbeWindows(ps[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	last := ws[len(ws)-1]
	// The slope is the growth designed in: 10 requests a second over 2
	// workers of 10 ms, 50 ms/s (within 20% for the engine's own timing).
	if last.Rate != 210 || !last.MetSLA || last.Accepted || last.Verdict != "unstable queue" || last.SLAUs > 500000 ||
		!last.Trend.Judged || !last.Trend.Unstable || last.Trend.P > 0.001 || math.Abs(last.Trend.SlopeUs-50000) > 10000 {
		t.Fatalf("window at 210: verdict %q met %v p90 %v µs trend %+v", last.Verdict, last.MetSLA, last.SLAUs, last.Trend)
	}
	if ps[0].Estimate != 120 || ps[0].LowerBound != 120 {
		t.Fatalf("estimate %v lower bound %v", ps[0].Estimate, ps[0].LowerBound)
	}
	// The report marks it: the windows table shows the trend, failed.
	r, err := results.New(st)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := rigor.ProbeSections(r)
	if err != nil || len(secs) != 1 {
		t.Fatalf("%v %v", secs, err)
	}
	var found bool
	for _, b := range secs[0].Blocks {
		if b.Table != nil && b.Table.ID == "probe-p1-windows" {
			row := b.Table.Rows[len(b.Table.Rows)-1]
			cell := row[len(row)-1]
			found = strings.Contains(cell.Text, "unstable") && cell.Mark == "fail" && row[12].Mark == "fail"
		}
	}
	if !found || !strings.Contains(secs[0].Summary, "unloaded latency") {
		t.Fatalf("the report does not show the unstable window or the baseline: %s", secs[0].Summary)
	}
}

// A spec with treatments is probed one treatment after another in one
// results directory; each treatment's facts are recorded, as a campaign
// records them, and the probes are compared at the end.
func TestProbeTreatmentsRecordFacts(t *testing.T) {
	srv := limitedServer(t, 200)
	treatments := `treatments:
  - name: slow
  - name: fast
    set: {load.timeout: 2s}
`
	out, _ := probeWeb(t, t.TempDir(), webSpec(srv.URL, treatments), "--start-rate", "50", "--window", "1s", "--max-windows", "2", "--no-report",
		"--baseline-rate", "20", "--baseline-window", "1s")
	for _, want := range []string{"treatment 1/2: slow", "treatment 2/2: fast", "comparison of the treatments"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	r, err := results.Open(resultsPath(t, out))
	if err != nil {
		t.Fatal(err)
	}
	ps, err := r.Probes()
	if err != nil || len(ps) != 2 {
		t.Fatalf("probes %v %v", ps, err)
	}
	ts := r.Treatments()
	if len(ts) != 2 || ts[0].Name != "slow" || ts[1].Name != "fast" || ts[1].Index != 1 {
		t.Fatalf("treatment facts %+v", ts)
	}
	if len(ts[1].Set) != 1 || ts[1].Set[0].Path != "load.timeout" || ts[1].Load.Timeout != 2*time.Second {
		t.Errorf("the fast treatment's facts: set %+v, timeout %v", ts[1].Set, ts[1].Load.Timeout)
	}
	if ts[0].Target.Address != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("target address %q", ts[0].Target.Address)
	}
}

// SIGINT during a window stops the probe at once, keeps the windows done so
// far, marks the probe interrupted and exits 130.
func TestProbeInterrupt(t *testing.T) {
	dir := t.TempDir()
	specPath := writeFile(t, dir, "null.yaml", `name: nullprobe
target: {type: null, service_time: 1ms, servers: 4}
workload: {ycsb: c, record_count: 100}
load: {model: open, rates: [1]}
`)
	cmd := exec.Command(binary, "probe", specPath, "--start-rate", "50", "--window", "2s", "--baseline-rate", "20", "--baseline-window", "1s", "-o", filepath.Join(dir, "out"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var e bytes.Buffer
	cmd.Stderr = &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if strings.Contains(lines.Text(), "accepted") {
			break // the first window is stored; the second one is running
		}
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != ExitInterrupted {
		t.Fatalf("exit %v, want %d\n%s\n%s", err, ExitInterrupted, strings.Join(seen, "\n"), e.String())
	}
	m := regexp.MustCompile(`interrupted: (\d+) windows stored in (\S+)`).FindStringSubmatch(e.String())
	if m == nil {
		t.Fatalf("stderr %q", e.String())
	}
	st, err := store.Open(m[2])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ps, _ := st.Probes()
	if len(ps) != 1 || ps[0].Status != store.StatusInterrupted || ps[0].Stop != probe.StopInterrupted || ps[0].RTTAddr != "" {
		t.Fatalf("probes %+v", ps)
	}
	ws, _ := st.ProbeWindows(ps[0].ID)
	if strconv.Itoa(len(ws)) != m[1] || len(ws) != 2 || !ws[0].Accepted || ws[1].Verdict != "interrupted" || !ws[1].Discarded {
		t.Fatalf("windows %+v", ws)
	}
}

func TestProbeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"probe", "testdata/null.yaml", "--window", "1500ms"}, "--window: 1.5s must be a whole number of seconds"},
		{[]string{"probe", "testdata/null.yaml", "--start-rate", "0"}, "--start-rate: 0 must be"},
		{[]string{"probe", "testdata/null.yaml", "--max-errors", "2"}, "--max-errors: 2 must be"},
		{[]string{"probe", "testdata/null.yaml", "--no-rtt", "--rtt-addr", "h:1"}, "either --rtt-addr or --no-rtt"},
		{[]string{"probe", "testdata/null.yaml", "--baseline-window", "2500ms"}, "--baseline-window: 2.5s must be a whole number of seconds (0 skips the baseline)"},
		{[]string{"probe", "testdata/null.yaml", "--unstable-p", "0.7"}, "--unstable-p: 0.7 must be a significance level"},
		{[]string{"probe", "testdata/null.yaml", "--baseline-rate", "-1"}, "--baseline-rate: -1 must be a positive number"},
	} {
		var out, errOut bytes.Buffer
		code := Main(c.args, &out, &errOut)
		if code != ExitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errOut.String())
		}
	}
}

// The RTT guard dials the address the opened target reports
// (target.Addresser): for an http target its base_url's host and port, for
// a managed server the port it was started on; targets without a network
// address say so.
func TestProbeRTTAddress(t *testing.T) {
	for _, c := range []struct {
		target, want, why string
	}{
		{`{type: http, base_url: "http://10.0.0.5:8080/api", read: {path: /x}}`, "10.0.0.5:8080", ""},
		{`{type: http, base_url: "https://kv.example.com", read: {path: /x}}`, "kv.example.com:443", ""},
		{`{type: http, base_url: "http://[::1]", read: {path: /x}}`, "[::1]:80", ""},
		{`{type: sqlite}`, "", "the sqlite target has no network address"},
		{`{type: null}`, "", "the null target has no network address"},
	} {
		addr, why := campaign.RTTAddress(openTarget(t, c.target))
		if addr != c.want || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
			t.Errorf("%s: %q, %q", c.target, addr, why)
		}
	}
}

// A managed server reports the port it was started on, so the probe's
// guard dials it without the spec naming one.
func TestProbeRTTAddressOfManagedServer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	addr, why := campaign.RTTAddress(openTarget(t, `{type: redis, managed: {}}`))
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" || why != "" {
		t.Fatalf("%q, %q", addr, why)
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("the managed server does not listen on %s: %v", addr, err)
	}
	c.Close()
}

// openTarget opens the target section src the way the probe does (a new
// session in a temporary directory) and closes it when the test ends.
func openTarget(t *testing.T, src string) (target.Target, string) {
	t.Helper()
	// A managed server runs as an unprivileged user, who must be able to
	// enter the results directory.
	dir := labtest.SearchableDir(t)
	s, err := spec.Parse(filepath.Join(dir, "a.yaml"), []byte("name: a\ntarget: "+src+"\nworkload: {ycsb: c}\nload: {model: open, rates: [1]}\noutput: out\n"))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	sess, err := campaign.NewSession(s, campaign.SessionOptions{Kind: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	su, err := sess.Open(context.Background(), campaign.Treatments(s)[0])
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	t.Cleanup(func() { su.Close() })
	return su.Target, s.Target.Type
}

// needLabRoot skips where a lab cannot be made (HEADROOM_REQUIRE_LAB=1
// fails instead).
func needLabRoot(t *testing.T) {
	t.Helper()
	labtest.Need(t)
}

// The probe against a server whose capacity a lab host's CPU quota limits
// by design: every request burns 4 ms of CPU time (testdata/cpuserver) on
// a host of 0.25 vCPU, so it serves at most 0.25 / 4 ms = 62.5 req/s, less
// the server's own overhead. The test measures what the host really
// serves (16 requests in flight for 3 s) and the probe's estimate must be
// within 15% of it. The spec has a lab: section, so the probe goes through
// campaign.Session (the lab is up already: the probe uses it and leaves
// it), and its RTT guard dials the lab host.
func TestProbeFindsCPUQuotaOfLabHost(t *testing.T) {
	needLabRoot(t)
	dir := t.TempDir()
	server := filepath.Join(dir, "cpuserver")
	if out, err := exec.Command("go", "build", "-o", server, "./testdata/cpuserver").CombinedOutput(); err != nil {
		t.Fatalf("building the test server: %v\n%s", err, out)
	}
	const labName, vcpus, work = "t-probe-cpu", 0.25, 4 * time.Millisecond
	labSection := fmt.Sprintf("lab:\n  name: %s\n  hosts:\n    - {name: web, type: small, vcpus: %g}\n", labName, vcpus)
	s, err := spec.Parse("lab.yaml", []byte("name: x\n"+labSection+"target: {type: null}\nworkload: {ycsb: c}\nload: {model: open, rates: [1]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	hosts, cat, err := s.Lab.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	lab.Down(labName)
	lb, err := lab.Up(labName, hosts, cat, lab.Options{Persistent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lab.Down(labName) })
	web, err := lb.Host("web")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(server, "-addr", ":8080", "-work", work.String())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := lb.Command("web", cmd, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("the test server did not start: %q %v", line, err)
	}
	addr := web.Addr + ":8080"

	specPath := writeFile(t, dir, "web.yaml", "name: web-cpu\n"+labSection+fmt.Sprintf(`target: {type: http, base_url: "http://%s", read: {path: "/kv/{key}"}}
workload: {ycsb: c, record_count: 1000}
load: {model: open, arrival: constant, rates: [1]}
phases: {populate: false}
`, addr))
	out, errOut, code := headroom(t, "probe", specPath, "--start-rate", "10", "--window", "3s", "-o", filepath.Join(dir, "out"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log("\n" + out)
	m := estimateLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no estimate:\n%s\n%s", out, errOut)
	}
	est, _ := strconv.ParseFloat(m[1], 64)

	served := saturate(t, "http://"+addr+"/kv/x", 16, 3*time.Second)
	design := vcpus / work.Seconds()
	t.Logf("designed limit %.1f req/s (0.25 vCPU / 4 ms), served at saturation %.1f req/s, probe estimate %v req/s", design, served, est)
	if served < 0.7*design || served > 1.15*design {
		t.Fatalf("the host served %.1f req/s at saturation; its CPU quota should hold it near %.1f", served, design)
	}
	// The probe's estimate is its last accepted rate, and it resolves the
	// rate no finer than one fine-tuning step above it (FineRate of it):
	// the rate the host serves at saturation must lie in that bracket,
	// widened by 15% on each side for a few seconds' noise. (Within 15% of
	// the estimate alone failed in the CI rehearsal of 2026-12-07 14:43:
	// 48 accepted, 56 missed with p90 195 ms, 58 served: the step is 17%
	// of what the host serves.)
	fine := probe.DefaultConfig().FineRate
	if lo, hi := 0.85*est, 1.15*est*(1+fine); served < lo || served > hi {
		t.Fatalf("the host serves %.1f req/s at saturation, outside the probe's bracket %v to %.1f req/s widened by 15%% (%.1f to %.1f)",
			served, est, est*(1+fine), lo, hi)
	}

	db := resultsPath(t, out)
	st := openResults(t, out)
	ps, err := st.Probes()
	if err != nil || len(ps) != 1 || ps[0].RTTAddr != addr || ps[0].Estimate != est {
		t.Fatalf("probes %+v %v", ps, err)
	}
	evs, _ := st.Events(-1)
	recorded := false
	for _, e := range evs {
		recorded = recorded || (e.Kind == "lab" && strings.Contains(e.Detail, `"vcpus":0.25`))
	}
	if !recorded {
		t.Error("the probe did not record the lab it ran in")
	}
	if _, err := lab.Open(labName); err != nil {
		t.Errorf("the probe took down a lab it did not bring up: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(db), "report.json"))
	if err != nil || !strings.Contains(string(raw), `"id": "probe-p1-surface"`) {
		t.Errorf("report.json lacks the probe's surface: %v", err)
	}
}

// saturate keeps n requests in flight against url for d and returns the
// successful completions per second.
func saturate(t *testing.T, url string, n int, d time.Duration) float64 {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: 10 * time.Second}
	var ok atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				resp, err := client.Get(url)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK && time.Now().Before(end) {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(ok.Load()) / d.Seconds()
}

package campaign

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/store"
)

// There is no Kubernetes cluster on the development and CI machines:
// these tests run `headroom run --agents k8s:N`'s campaign side against
// client-go's fake clientset, which stores objects but runs nothing. The
// test's fakeCluster plays the Job controller and the kubelet: for the Job
// the launcher creates it makes the pods from the template, marks them
// Running, and runs each pod's agent in this process (agent.Serve with the
// campaign's AgentRunner, as `headroom agent` does), dialling the address
// and using the name from the Job's arguments and the token from the
// Secret the launcher created. Image pulls, scheduling and the pods'
// network are not exercised.

const k8sSpec = `
name: k8s-agents
target: {type: null}
workload: {ycsb: b, record_count: 1000}
load: {model: closed, clients: [5], think_time: 2ms}
phases: {warmup: 1s, measure: 2s, populate: false}
interval: 1s
monitor: {enabled: false}
output: out
kubernetes: {namespace: load, image: registry.example/headroom:test, coordinator: "127.0.0.1:0", start_timeout: 20s}
`

// Two pods: the run completes with every merged interval the sum of the
// agents', the agents are named and placed as the Job's pods and carry
// kubernetes.region, and the Job and its Secret are gone at the end.
func TestKubernetesAgentsRun(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, strings.Replace(k8sSpec, "start_timeout: 20s}", "start_timeout: 20s, region: eu-west}", 1))
	fc := newFakeCluster(t)
	out, err := Start(context.Background(), s, Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t, out)
	r := storedRuns(t, st, 1)[0]
	if r.Status != store.StatusCompleted || r.Message != "" {
		t.Fatalf("run: %s %q", r.Status, r.Message)
	}
	job := fc.onlyJob(t)
	if !strings.HasPrefix(job.Name, "headroom-agents-") {
		t.Errorf("job name %q", job.Name)
	}
	if args := job.Spec.Template.Spec.Containers[0].Args; args[2] == "127.0.0.1:0" || !strings.HasPrefix(args[2], "127.0.0.1:") {
		t.Errorf("the pods dial %s; want the coordinator's own port", args[2])
	}
	merged, err := st.Intervals(r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	per, err := st.AgentIntervals(r.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, a := range per {
		sums[fmt.Sprint(a.Phase, a.Op, a.Start.UnixNano())] += a.Count
	}
	var total int64
	for _, m := range merged {
		if got := sums[fmt.Sprint(m.Phase, m.Op, m.Start.UnixNano())]; got != m.Count || m.Hist.TotalCount() != m.Count {
			t.Errorf("%s %s %v: merged %d (histogram %d), agents %d", m.Phase, m.Op, m.Start, m.Count, m.Hist.TotalCount(), got)
		}
		total += m.Count
	}
	if total < 500 || len(per) != 2*len(merged) {
		t.Errorf("%d requests in %d merged and %d agent intervals", total, len(merged), len(per))
	}
	res, err := results.Open(out.StorePath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	as, err := res.AgentRuns(r.ID)
	if err != nil || len(as) != 2 {
		t.Fatalf("agent runs: %v %+v", err, as)
	}
	for i, a := range as {
		name := fmt.Sprintf("%s-%d", job.Name, i)
		if a.Agent != name || a.Host != "k8s:load/"+name+"-pod" || a.Status != store.AgentCompleted || !a.Reported {
			t.Errorf("agent %d: %s on %s, %s (reported %v); want %s on k8s:load/%s-pod, completed", i, a.Agent, a.Host, a.Status, a.Reported, name, name)
		}
	}
	if regs, err := res.AgentRegions(r.ID); err != nil || len(regs) != 2 || regs[as[0].Agent] != "eu-west" || regs[as[1].Agent] != "eu-west" {
		t.Errorf("agent regions: %v %v; want both in eu-west (kubernetes.region)", regs, err)
	}
	if as[0].Clients+as[1].Clients != 5 {
		t.Errorf("clients %d + %d, want 5", as[0].Clients, as[1].Clients)
	}
	fc.assertGone(t, job)
}

// Agents whose token is not the run's are refused; their pods end, the
// campaign fails saying so, and the Job and Secret are deleted.
func TestKubernetesAgentsRefusedCleansUp(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, k8sSpec)
	fc := newFakeCluster(t)
	fc.token = []byte("not-the-runs-token-0123456789")
	// The kubelet reports the refused agents' pods as failed after the
	// launcher has seen them run (it polls each second), so that the
	// coordinator's wait, not the launch, meets them.
	fc.failAfter = 2 * time.Second
	start := time.Now()
	_, err := Start(context.Background(), s, Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if err == nil || !strings.Contains(err.Error(), "did not connect") || !strings.Contains(err.Error(), "-0-pod failed") {
		t.Fatalf("campaign with refused agents: %v", err)
	}
	t.Log(err)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the failure took %v; the ended pods should end the wait", d)
	}
	fc.assertGone(t, fc.onlyJob(t))
}

// An interrupt mid-run (Ctrl-C, SIGTERM: the context ends) stops the run,
// and the Job and Secret are deleted.
func TestKubernetesAgentsInterruptedCleansUp(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, k8sSpec)
	fc := newFakeCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc.onInterval = cancel // the first interval an agent sends
	out, err := Start(ctx, s, Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted campaign: %v", err)
	}
	r := storedRuns(t, openStore(t, out), 1)[0]
	if r.Status != store.StatusInterrupted {
		t.Errorf("run %s %q, want interrupted", r.Status, r.Message)
	}
	fc.assertGone(t, fc.onlyJob(t))
}

// Without kubernetes.coordinator or a load.agents.listen host the pods
// have nothing to dial: one sentence says what to set, before any Job.
func TestKubernetesAgentsNeedAnAddress(t *testing.T) {
	dir := t.TempDir()
	s := parse(t, dir, strings.Replace(k8sSpec, `, coordinator: "127.0.0.1:0"`, "", 1))
	fc := newFakeCluster(t)
	_, err := Start(context.Background(), s, Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if err == nil || !strings.Contains(err.Error(), "set kubernetes.coordinator to HOST:PORT") {
		t.Fatalf("no address: %v", err)
	}
	if jobs := fc.seenJobs(); len(jobs) != 0 {
		t.Errorf("jobs were created: %v", jobs)
	}
	if err := CheckKubernetesAgents(s, 2); err == nil || !strings.Contains(err.Error(), "set kubernetes.coordinator") {
		t.Errorf("CheckKubernetesAgents without an address: %v", err)
	}
	if err := CheckKubernetesAgents(s, 6); err == nil || !strings.Contains(err.Error(), "5 clients cannot be dealt out to 6 agents") {
		t.Errorf("6 pods for 5 clients: %v", err)
	}
}

// fakeCluster is the fake clientset with a loop that plays the Job
// controller and the kubelet for the Jobs the launcher creates.
type fakeCluster struct {
	cs         *fake.Clientset
	dir        string        // the agents' scratch directories go here
	token      []byte        // the token the agents use; nil = the Secret's
	allowEnv   []string      // the Job's --allow-env arguments, as the pods' agents get them
	onInterval func()        // called as an agent sends an interval; nil = nothing
	failAfter  time.Duration // how late a failed agent's pod is reported failed
	mu         sync.Mutex
	jobs       []*batchv1.Job
	agents     sync.WaitGroup
}

func newFakeCluster(t *testing.T) *fakeCluster {
	fc := &fakeCluster{cs: fake.NewClientset(), dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fc.loop(t, ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		fc.agents.Wait()
	})
	return fc
}

func (fc *fakeCluster) client() (kubernetes.Interface, error) { return fc.cs, nil }

// loop starts the pods of every new Job until ctx ends.
func (fc *fakeCluster) loop(t *testing.T, ctx context.Context) {
	started := map[string]bool{}
	for ctx.Err() == nil {
		list, err := fc.cs.BatchV1().Jobs("load").List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range list.Items {
				j := &list.Items[i]
				if !started[j.Name] {
					started[j.Name] = true
					fc.mu.Lock()
					fc.jobs = append(fc.jobs, j.DeepCopy())
					fc.mu.Unlock()
					fc.startPods(t, ctx, j)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startPods makes the Job's pods Running and runs each one's agent: the
// name and address from the container's arguments, the token from the
// Secret.
func (fc *fakeCluster) startPods(t *testing.T, ctx context.Context, j *batchv1.Job) {
	sec, err := fc.cs.CoreV1().Secrets(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("the Job %s has no Secret: %v", j.Name, err)
		return
	}
	token := sec.Data["token"]
	if fc.token != nil {
		token = fc.token
	}
	args := j.Spec.Template.Spec.Containers[0].Args
	connect, name := args[slices.Index(args, "--connect")+1], args[slices.Index(args, "--name")+1]
	fc.mu.Lock()
	fc.allowEnv = nil
	for i, a := range args {
		if a == "--allow-env" && i+1 < len(args) {
			fc.allowEnv = append(fc.allowEnv, args[i+1])
		}
	}
	fc.mu.Unlock()
	for i := range int(*j.Spec.Completions) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-pod", j.Name, i), Namespace: j.Namespace, Labels: j.Spec.Template.Labels,
				Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": fmt.Sprint(i)}},
			Spec:   j.Spec.Template.Spec,
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		if _, err := fc.cs.CoreV1().Pods(j.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating pod %s: %v", pod.Name, err)
			return
		}
		agentName := strings.ReplaceAll(name, "$(AGENT_INDEX)", fmt.Sprint(i))
		fc.agents.Add(1)
		go func() {
			defer fc.agents.Done()
			phase := corev1.PodSucceeded
			if err := fc.runAgent(ctx, connect, agentName, token); err != nil {
				phase = corev1.PodFailed
				time.Sleep(fc.failAfter)
			}
			pod.Status.Phase = phase
			_, _ = fc.cs.CoreV1().Pods(j.Namespace).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{})
		}()
	}
}

func (fc *fakeCluster) runAgent(ctx context.Context, connect, name string, token []byte) error {
	dir, err := os.MkdirTemp(fc.dir, name)
	if err != nil {
		return err
	}
	nc, err := net.DialTimeout("tcp", connect, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	var r agent.Runner = AgentRunner{Dir: dir, AllowEnv: fc.allowEnv}
	if fc.onInterval != nil {
		r = hookRunner{r, fc.onInterval}
	}
	return agent.Serve(ctx, nc, name, token, r, nil)
}

func (fc *fakeCluster) seenJobs() []*batchv1.Job {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return slices.Clone(fc.jobs)
}

func (fc *fakeCluster) onlyJob(t *testing.T) *batchv1.Job {
	t.Helper()
	jobs := fc.seenJobs()
	if len(jobs) != 1 {
		t.Fatalf("%d jobs were launched, want 1", len(jobs))
	}
	return jobs[0]
}

func (fc *fakeCluster) assertGone(t *testing.T, j *batchv1.Job) {
	t.Helper()
	if _, err := fc.cs.BatchV1().Jobs(j.Namespace).Get(context.Background(), j.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Job %s is still there: %v", j.Name, err)
	}
	if _, err := fc.cs.CoreV1().Secrets(j.Namespace).Get(context.Background(), j.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret %s is still there: %v", j.Name, err)
	}
}

// hookRunner calls on as each interval is sent, to interrupt a run at a
// known point.
type hookRunner struct {
	agent.Runner
	on func()
}

func (h hookRunner) Prepare(ctx context.Context, o agent.Order) (agent.Prepared, error) {
	p, err := h.Runner.Prepare(ctx, o)
	if err != nil {
		return nil, err
	}
	return hookPrepared{p, h.on}, nil
}

type hookPrepared struct {
	agent.Prepared
	on func()
}

func (h hookPrepared) Run(ctx context.Context, start time.Time, send func(agent.IntervalMsg) error) (agent.ResultMsg, error) {
	return h.Prepared.Run(ctx, start, func(m agent.IntervalMsg) error {
		h.on()
		return send(m)
	})
}

// The variables a spec's target names reach the agent pods through the
// Job's Secret (issue 36), and they are the ones the agents may read: a
// pod's agent sends the http target's Authorization header from it, and
// its value is in the Secret only, never in the Job. A variable not set
// in the coordinator's environment stops the run before anything is
// launched, with one sentence (the target's own check, before podEnv's).
func TestKubernetesAgentsGetTheTargetsVariables(t *testing.T) {
	const env, value = "HEADROOM_TEST_POD_AUTH", "Bearer pod-env-test"
	srv := newAuthServer(t)
	text := fmt.Sprintf(`
name: k8s-env
target: {type: http, base_url: %q, read: {path: "/r/{key}"}, auth_header_env: %s}
workload: {ycsb: c, record_count: 100}
load: {model: closed, clients: [2]}
phases: {warmup: 1s, measure: 1s, populate: false}
interval: 1s
monitor: {enabled: false}
output: out
kubernetes: {namespace: load, image: registry.example/headroom:test, coordinator: "127.0.0.1:0", start_timeout: 20s}
`, srv.URL, env)

	fc := newFakeCluster(t)
	_, err := Start(context.Background(), parse(t, t.TempDir(), text), Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if err == nil || !strings.Contains(err.Error(), "auth_header_env") || !strings.Contains(err.Error(), env+" is not set") {
		t.Fatalf("unset variable: %v; want one sentence naming auth_header_env and %s", err, env)
	}
	if jobs := fc.seenJobs(); len(jobs) != 0 {
		t.Errorf("%d Jobs launched for a run that cannot give its agents their variable", len(jobs))
	}

	t.Setenv(env, value)
	fc = newFakeCluster(t)
	out, err := Start(context.Background(), parse(t, t.TempDir(), text), Options{Kubernetes: &KubernetesAgents{Agents: 2, Client: fc.client}})
	if err != nil {
		t.Fatal(err)
	}
	if r := storedRuns(t, openStore(t, out), 1)[0]; r.Status != store.StatusCompleted {
		t.Fatalf("run: %s %q", r.Status, r.Message)
	}
	job := fc.onlyJob(t)
	ctr := job.Spec.Template.Spec.Containers[0]
	if i := slices.Index(ctr.Args, "--allow-env"); i < 0 || ctr.Args[i+1] != env {
		t.Errorf("the agents are not allowed %s: args %v", env, ctr.Args)
	}
	fromSecret := false
	for _, e := range ctr.Env {
		fromSecret = fromSecret || e.Name == env && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == job.Name
	}
	if !fromSecret {
		t.Errorf("the pods do not get %s from the Job's Secret: %+v", env, ctr.Env)
	}
	if strings.Contains(fmt.Sprintf("%+v", job), value) {
		t.Error("the variable's value is in the Job")
	}
	auths := srv.seen()
	if len(auths) == 0 {
		t.Fatal("the agents sent no request")
	}
	for i, a := range auths {
		if a != value {
			t.Fatalf("request %d carried Authorization %q, want the variable's value", i, a)
		}
	}
}

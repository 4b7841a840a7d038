package k8s

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// There is no Kubernetes cluster on the development and CI machines: these
// tests drive the launcher against client-go's fake clientset, which stores
// objects but runs no controllers. The test plays the Job controller and
// the kubelet: it makes the Job's pods from its template and sets their
// phase.

const token = "s3cret-token-0123456789"

func testConfig() Config {
	return Config{Agents: 3, Coordinator: "10.0.0.5:7070", Token: token, Image: "registry.example/headroom:1.0",
		Namespace: "load", Name: "hr-run7", CPU: "2", Memory: "1Gi", Region: "eu-west", Timeout: 2 * time.Second, Poll: 20 * time.Millisecond}
}

// The Job is an Indexed Job of N pods at once, without retries; the agents'
// arguments name the coordinator, their index and the token file; the token
// is only in the Secret, mounted read-only, never in args or env values.
func TestJobShape(t *testing.T) {
	l, err := New(fake.NewClientset(), testConfig())
	if err != nil {
		t.Fatal(err)
	}
	j := l.Job()
	s := j.Spec
	if *s.Completions != 3 || *s.Parallelism != 3 || *s.CompletionMode != batchv1.IndexedCompletion || *s.BackoffLimit != 0 {
		t.Fatalf("job spec: completions %d parallelism %d mode %s backoff %d", *s.Completions, *s.Parallelism, *s.CompletionMode, *s.BackoffLimit)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.NodeSelector[regionLabel] != "eu-west" {
		t.Fatalf("pod spec: restart %s, node selector %v", pod.RestartPolicy, pod.NodeSelector)
	}
	if s.Template.Labels[LaunchLabel] != "hr-run7" {
		t.Fatalf("template labels %v", s.Template.Labels)
	}
	ctr := pod.Containers[0]
	wantArgs := []string{"agent", "--connect", "10.0.0.5:7070", "--name", "hr-run7-$(AGENT_INDEX)", "--token-file", "/var/run/headroom/token"}
	if ctr.Image != "registry.example/headroom:1.0" || !reflect.DeepEqual(ctr.Command, []string{"headroom"}) || !reflect.DeepEqual(ctr.Args, wantArgs) {
		t.Fatalf("container: image %s command %v args %v", ctr.Image, ctr.Command, ctr.Args)
	}
	if len(ctr.Env) != 1 || ctr.Env[0].Name != indexEnv || ctr.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("env %+v", ctr.Env)
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := ctr.Resources.Requests[name], ctr.Resources.Limits[name]
		if req.IsZero() || req.Cmp(lim) != 0 {
			t.Fatalf("%s: request %s limit %s; want equal and set", name, req.String(), lim.String())
		}
	}
	if q := ctr.Resources.Limits[corev1.ResourceMemory]; q.String() != "1Gi" {
		t.Fatalf("memory limit %s", q.String())
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != "hr-run7" || *pod.Volumes[0].Secret.DefaultMode != 0o400 {
		t.Fatalf("volumes %+v", pod.Volumes)
	}
	if m := ctr.VolumeMounts; len(m) != 1 || m[0].MountPath != TokenDir || !m[0].ReadOnly || m[0].Name != pod.Volumes[0].Name {
		t.Fatalf("mounts %+v", m)
	}
	if dump := fmt.Sprintf("%+v", j); strings.Contains(dump, token) {
		t.Fatal("the token is in the Job")
	}
	if sec := l.Secret(); string(sec.Data[tokenKey]) != token {
		t.Fatalf("secret data %v", sec.Data)
	}
	if got := l.AgentNames(); !reflect.DeepEqual(got, []string{"hr-run7-0", "hr-run7-1", "hr-run7-2"}) {
		t.Fatalf("agent names %v", got)
	}
}

// Launch returns once every pod runs; Stop deletes the Job and the Secret.
func TestLaunchWaitsForEveryPodThenCleansUp(t *testing.T) {
	cs := fake.NewClientset()
	l, err := New(cs, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- l.Launch(ctx) }()
	job := waitJob(t, cs, "load", "hr-run7")
	for i := 0; i < 3; i++ {
		makePod(t, cs, job, i, corev1.PodPending)
	}
	select {
	case err := <-done:
		t.Fatalf("Launch returned while pods were pending: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	for i := 0; i < 3; i++ {
		setPhase(t, cs, job, i, corev1.PodRunning)
		if i < 2 {
			select {
			case err := <-done:
				t.Fatalf("Launch returned with %d of 3 pods running: %v", i+1, err)
			case <-time.After(60 * time.Millisecond):
			}
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Launch did not return after every pod ran")
	}
	if err := l.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, cs, "load", "hr-run7")
	if err := l.Stop(); err != nil { // what is gone is not an error
		t.Fatalf("second Stop: %v", err)
	}
}

// A pod that cannot be scheduled makes the launch fail after the timeout,
// naming the pod and the scheduler's reason; it cleans up.
func TestLaunchNamesStuckPods(t *testing.T) {
	cs := fake.NewClientset()
	cfg := testConfig()
	cfg.Timeout = 300 * time.Millisecond
	l, err := New(cs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Launch(context.Background()) }()
	job := waitJob(t, cs, "load", "hr-run7")
	makePod(t, cs, job, 0, corev1.PodRunning)
	p := makePod(t, cs, job, 1, corev1.PodPending)
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	if _, err := cs.CoreV1().Pods("load").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs.CoreV1().Events("load").Create(context.Background(), &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "load"},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "hr-run7"}, Reason: "FailedCreate", Message: "exceeded quota: pods=2"}, metav1.CreateOptions{})
	err = <-done
	for _, want := range []string{"only 1 of 3 pods running", "hr-run7-1-pod is Pending", "Unschedulable 0/3 nodes are available: 3 Insufficient cpu.",
		"1 pod(s) were never created (Job events: FailedCreate: exceeded quota: pods=2)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error lacks %q: %v", want, err)
		}
	}
	assertGone(t, cs, "load", "hr-run7")
}

// Ctrl-C while waiting (the context ends) stops the wait and deletes the
// Job and the Secret.
func TestLaunchInterruptedCleansUp(t *testing.T) {
	cs := fake.NewClientset()
	l, err := New(cs, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Launch(ctx) }()
	waitJob(t, cs, "load", "hr-run7")
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "interrupted while 0 of 3 pods were running") {
		t.Fatalf("interrupted launch: %v", err)
	}
	assertGone(t, cs, "load", "hr-run7")
}

// Bad configuration is one sentence naming the field.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Image = "" }, "no image"},
		{func(c *Config) { c.Agents = 0 }, "launch at least 1"},
		{func(c *Config) { c.Name = "Bad_Name" }, "not a DNS label"},
		{func(c *Config) { c.CPU = "two" }, `cpu "two" is not a Kubernetes quantity`},
		{func(c *Config) { c.Token = "" }, "no token"},
	} {
		cfg := testConfig()
		c.mutate(&cfg)
		if _, err := New(fake.NewClientset(), cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
	for v, want := range map[string]int{"k8s:4": 4, "k8s:0": 0, "ssh:2": 0, "k8s:x": 0} {
		n, err := ParseAgents(v)
		if n != want || (want == 0) != (err != nil) {
			t.Errorf("ParseAgents(%q) = %d, %v", v, n, err)
		}
	}
}

func waitJob(t *testing.T, cs *fake.Clientset, ns, name string) *batchv1.Job {
	t.Helper()
	for i := 0; i < 200; i++ {
		j, err := cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			return j
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the Job was never created")
	return nil
}

// makePod makes pod i of the Job from its template, as the Job controller
// would (with the completion index annotation).
func makePod(t *testing.T, cs *fake.Clientset, j *batchv1.Job, i int, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d-pod", j.Name, i), Namespace: j.Namespace,
			Labels: j.Spec.Template.Labels, Annotations: map[string]string{indexAnnot: fmt.Sprint(i)}},
		Spec:   j.Spec.Template.Spec,
		Status: corev1.PodStatus{Phase: phase},
	}
	p, err := cs.CoreV1().Pods(j.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func setPhase(t *testing.T, cs *fake.Clientset, j *batchv1.Job, i int, phase corev1.PodPhase) {
	t.Helper()
	p, err := cs.CoreV1().Pods(j.Namespace).Get(context.Background(), fmt.Sprintf("%s-%d-pod", j.Name, i), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	if _, err := cs.CoreV1().Pods(j.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func assertGone(t *testing.T, cs *fake.Clientset, ns, name string) {
	t.Helper()
	if _, err := cs.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Job is still there: %v", err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Secret is still there: %v", err)
	}
}

// The variables a spec's target names travel in the Secret, reach the
// agents as variables drawn from it, and are the ones the agents may
// read (--allow-env, sorted); their values are never in the Job.
func TestJobCarriesTheTargetsVariablesFromTheSecret(t *testing.T) {
	cfg := testConfig()
	cfg.Env = map[string]string{"PGPASSWORD": "pg-secret-value", "API_TOKEN": "Bearer api-secret"}
	l, err := New(fake.NewClientset(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	j := l.Job()
	ctr := j.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"agent", "--connect", "10.0.0.5:7070", "--name", "hr-run7-$(AGENT_INDEX)", "--token-file", "/var/run/headroom/token",
		"--allow-env", "API_TOKEN", "--allow-env", "PGPASSWORD"}
	if !reflect.DeepEqual(ctr.Args, wantArgs) {
		t.Errorf("args %v\nwant %v", ctr.Args, wantArgs)
	}
	sec := l.Secret()
	for _, name := range []string{"API_TOKEN", "PGPASSWORD"} {
		var ref *corev1.SecretKeySelector
		for _, e := range ctr.Env {
			if e.Name == name && e.ValueFrom != nil {
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil || ref.Name != "hr-run7" || string(sec.Data[ref.Key]) != cfg.Env[name] {
			t.Errorf("%s: from %+v; the Secret holds %v", name, ref, sec.Data)
		}
	}
	if dump := fmt.Sprintf("%+v", j); strings.Contains(dump, "pg-secret-value") || strings.Contains(dump, "api-secret") {
		t.Error("a variable's value is in the Job")
	}
	for _, bad := range []string{"A-B", "1X", "AGENT_INDEX", ""} {
		c := testConfig()
		c.Env = map[string]string{bad: "v"}
		if _, err := New(fake.NewClientset(), c); err == nil || !strings.Contains(err.Error(), "cannot be an environment variable of the pods") {
			t.Errorf("variable %q: %v", bad, err)
		}
	}
}

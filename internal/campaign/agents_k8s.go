package campaign

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/agent/k8s"
	"github.com/headroom-dev/headroom/internal/spec"
)

// KubernetesAgents launches a treatment's load agents as the N pods of a
// Kubernetes Indexed Job (headroom run --agents k8s:N) in place of
// load.agents. The spec's kubernetes: section says where and how
// (docs/fleet.md, "Kubernetes").
type KubernetesAgents struct {
	Agents int // N
	// Client connects to the cluster; nil = k8s.Client (the kubeconfig).
	// Tests pass client-go's fake clientset.
	Client func() (kubernetes.Interface, error)
}

// CheckKubernetesAgents says, before anything starts, what stops s's
// campaign from running with n agent pods: in any of its treatments, a
// missing kubernetes: section, no address for the pods to dial, or a
// load that does not split n ways.
func CheckKubernetesAgents(s *spec.Spec, n int) error {
	for _, t := range Treatments(s) {
		err := t.Spec.CheckAgentPods(n)
		if err == nil {
			_, _, err = podAddress(t.Spec)
		}
		if err != nil {
			if t.Name != "" {
				return fmt.Errorf("treatment %s: %w", t.Name, err)
			}
			return err
		}
	}
	return nil
}

// startKubernetesFleet listens as the coordinator where the pods can
// reach it, launches the Job (which waits for every pod to run), and
// waits until every agent has connected. The fleet's close says bye to
// the agents and deletes the Job and its Secret; so does every failure
// here, an interrupt included.
func startKubernetesFleet(ctx context.Context, s *spec.Spec, ka *KubernetesAgents, note func(string)) (*fleet, error) {
	if err := CheckKubernetesAgents(s, ka.Agents); err != nil {
		return nil, err
	}
	listen, dial, _ := podAddress(s)
	connect := ka.Client
	if connect == nil {
		connect = k8s.Client
	}
	client, err := connect()
	if err != nil {
		return nil, err
	}
	token := agent.NewToken()
	if a := s.Load.Agents; a != nil && a.TokenFile != "" {
		if token, err = agent.ReadToken(specPath(s, a.TokenFile)); err != nil {
			return nil, fmt.Errorf("load.agents.token_file: %w", err)
		}
	}
	coord, err := agent.Listen(listen, token)
	if err != nil {
		return nil, fmt.Errorf("kubernetes agents: cannot listen on %s for the pods: %w", listen, err)
	}
	cfg := k8s.FromSpec(s.Kubernetes, ka.Agents, dial(coord.Port()), token)
	cfg.Name = launchName()
	if cfg.Env, err = podEnv(s); err != nil {
		_ = coord.Close()
		return nil, err
	}
	l, err := k8s.New(client, cfg)
	if err != nil {
		_ = coord.Close()
		return nil, err
	}
	ns := namespaceOf(s.Kubernetes)
	note(fmt.Sprintf("load agents: launching Job %s/%s of %d pods (%s), dialling %s", ns, cfg.Name, ka.Agents, cfg.Image, cfg.Coordinator))
	if err := l.Launch(ctx); err != nil {
		// Launch has deleted what it made.
		_ = coord.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrInterrupted, err)
		}
		return nil, err
	}
	f := &fleet{coord: coord, names: l.AgentNames(), stop: l.Stop, region: cfg.Region}
	f.hosts = podHosts(ctx, client, ns, cfg.Name, len(f.names))
	note(fmt.Sprintf("load agents: pods running; waiting for %s on port %d", strings.Join(f.names, ", "), coord.Port()))
	check := func() error { return endedPods(ctx, client, ns, cfg.Name) }
	if err := coord.Wait(ctx, f.names, time.Minute, check); err != nil {
		if cerr := f.close(); cerr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, cerr)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %v", ErrInterrupted, err)
		}
		return nil, err
	}
	return f, nil
}

// podEnv is what the pods' agents may read of this process's environment:
// the variables the spec's target options name (password_env,
// auth_header_env...), which the Job carries in its Secret. A pod has no
// other way to them, so one that is not set here is an error now rather
// than every agent's at its first order.
func podEnv(s *spec.Spec) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range envOptions(s.Target.Options) {
		v, ok := os.LookupEnv(f.name)
		if !ok {
			return nil, fmt.Errorf("target.%s names the environment variable %s, which is not set here: the Kubernetes agents get it from this process's environment, through their Job's Secret; set it before the run", f.key, f.name)
		}
		out[f.name] = v
	}
	return out, nil
}

// podAddress is where the coordinator listens for the pods and, given the
// port it got, the HOST:PORT the pods dial: kubernetes.coordinator, else
// load.agents.listen when it names a host. The pods cannot dial "every
// address", so without either it says what to set.
func podAddress(s *spec.Spec) (listen string, dial func(port int) string, err error) {
	var own string // load.agents.listen
	if a := s.Load.Agents; a != nil {
		own = a.Listen
	}
	if c := s.Kubernetes.Coordinator; c != "" {
		host, port, _ := net.SplitHostPort(c) // the spec checked it
		listen = own
		if listen == "" {
			listen = net.JoinHostPort("", port)
		}
		return listen, func(got int) string {
			if port != "0" {
				return c
			}
			return net.JoinHostPort(host, strconv.Itoa(got))
		}, nil
	}
	if host, _, err := net.SplitHostPort(own); err == nil && host != "" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			return own, func(got int) string { return net.JoinHostPort(host, strconv.Itoa(got)) }, nil
		}
	}
	return "", nil, errors.New("kubernetes agents: the pods need an address of this machine to dial; set kubernetes.coordinator to HOST:PORT as the cluster reaches this machine (e.g. 10.0.0.5:7070)")
}

func namespaceOf(k *spec.Kubernetes) string {
	if k.Namespace == "" {
		return "default"
	}
	return k.Namespace
}

// launchName names a launch's Job, Secret and agents: unique, so that
// two coordinators in one namespace, or a Job a killed coordinator left,
// do not collide.
func launchName() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "headroom-agents-" + hex.EncodeToString(b)
}

// podHosts names where each agent runs, by its completion index, for the
// store's agent runs: k8s:NAMESPACE/POD (and the node, once scheduled).
func podHosts(ctx context.Context, client kubernetes.Interface, ns, job string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "k8s:" + ns + "/" + job + "-" + strconv.Itoa(i)
	}
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: k8s.LaunchLabel + "=" + job})
	if err != nil {
		return out
	}
	for _, p := range list.Items {
		i, err := strconv.Atoi(p.Annotations["batch.kubernetes.io/job-completion-index"])
		if err != nil || i < 0 || i >= n {
			continue
		}
		out[i] = "k8s:" + ns + "/" + p.Name
		if p.Spec.NodeName != "" {
			out[i] += " on " + p.Spec.NodeName
		}
	}
	return out
}

// endedPods fails the wait for the agents as soon as one of the pods has
// ended: its agent will not connect.
func endedPods(ctx context.Context, client kubernetes.Interface, ns, job string) error {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: k8s.LaunchLabel + "=" + job})
	if err != nil {
		return nil // the coordinator's own timeout still bounds the wait
	}
	var ended []string
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			ended = append(ended, fmt.Sprintf("pod %s %s (see kubectl logs -n %s %s)", p.Name, strings.ToLower(string(p.Status.Phase)), ns, p.Name))
		}
	}
	if len(ended) > 0 {
		return errors.New(strings.Join(ended, "; "))
	}
	return nil
}

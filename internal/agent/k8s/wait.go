package k8s

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitRunning polls the Job's pods until all N run. It fails at once when
// a pod fails, and after the timeout with the pods that are not running
// and why (their conditions, containers' waiting reasons and latest
// events), or the Job's own events when pods are missing.
func (l *Launcher) waitRunning(ctx context.Context) error {
	c := l.cfg
	deadline := time.Now().Add(c.Timeout)
	tick := time.NewTicker(c.Poll)
	defer tick.Stop()
	for {
		pods, err := l.pods(ctx)
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods {
			switch p.Status.Phase {
			case corev1.PodRunning:
				running++
			case corev1.PodFailed, corev1.PodSucceeded:
				return fmt.Errorf("kubernetes agents: pod %s %s before the run started: %s", p.Name, strings.ToLower(string(p.Status.Phase)), l.why(ctx, p))
			}
		}
		if running >= c.Agents {
			return nil
		}
		if time.Now().After(deadline) {
			return l.stuck(ctx, pods, running)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubernetes agents: interrupted while %d of %d pods were running", running, c.Agents)
		case <-tick.C:
		}
	}
}

// pods lists the Job's pods, by the launch label its template gives them.
func (l *Launcher) pods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := l.client.CoreV1().Pods(l.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LaunchLabel + "=" + l.cfg.Name})
	if err != nil {
		return nil, fmt.Errorf("kubernetes agents: cannot list the pods of Job %s/%s: %v", l.cfg.Namespace, l.cfg.Name, err)
	}
	pods := list.Items
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods, nil
}

// stuck is the timeout's error: one clause per pod not running.
func (l *Launcher) stuck(ctx context.Context, pods []corev1.Pod, running int) error {
	c := l.cfg
	var parts []string
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			parts = append(parts, fmt.Sprintf("%s is %s (%s)", p.Name, p.Status.Phase, l.why(ctx, p)))
		}
	}
	if missing := c.Agents - len(pods); missing > 0 {
		why := "no events"
		if evs := l.events(ctx, "Job", c.Name); len(evs) > 0 {
			why = strings.Join(evs, "; ")
		}
		parts = append(parts, fmt.Sprintf("%d pod(s) were never created (Job events: %s)", missing, why))
	}
	return fmt.Errorf("kubernetes agents: only %d of %d pods running after %s: %s", running, c.Agents, c.Timeout, strings.Join(parts, "; "))
}

// why says why a pod is not running, from what the cluster says of it.
func (l *Launcher) why(ctx context.Context, p corev1.Pod) string {
	var out []string
	for _, cond := range p.Status.Conditions {
		if cond.Status != corev1.ConditionTrue && (cond.Reason != "" || cond.Message != "") {
			out = append(out, fmt.Sprintf("%s: %s %s", cond.Type, cond.Reason, cond.Message))
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			out = append(out, fmt.Sprintf("container %s waiting: %s %s", cs.Name, w.Reason, w.Message))
		}
		if t := cs.State.Terminated; t != nil {
			out = append(out, fmt.Sprintf("container %s exited %d: %s %s", cs.Name, t.ExitCode, t.Reason, t.Message))
		}
	}
	if len(out) == 0 {
		out = l.events(ctx, "Pod", p.Name)
	}
	if len(out) == 0 {
		return "the cluster says nothing yet"
	}
	return strings.TrimSpace(strings.Join(out, "; "))
}

// events are the latest messages of the events about one object (the
// last three, oldest first).
func (l *Launcher) events(ctx context.Context, kind, name string) []string {
	list, err := l.client.CoreV1().Events(l.cfg.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name})
	if err != nil {
		return nil
	}
	var evs []corev1.Event
	for _, e := range list.Items { // a fake clientset ignores field selectors
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			evs = append(evs, e)
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].LastTimestamp.Before(&evs[j].LastTimestamp) })
	if len(evs) > 3 {
		evs = evs[len(evs)-3:]
	}
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Reason + ": " + e.Message
	}
	return out
}

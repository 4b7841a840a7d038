package spec

import (
	"strings"
	"testing"
)

// kubernetes.coordinator must be HOST:PORT; --agents k8s:N needs the
// kubernetes: section and a load that splits N ways.
func TestAgentPods(t *testing.T) {
	head := "name: k\ntarget: {type: null}\nworkload: {ycsb: a, record_count: 10}\nphases: {measure: 1s}\n"
	k8s := "kubernetes: {image: reg/headroom:1, coordinator: \"10.0.0.5:7070\"}\n"
	s, err := Parse("k.yaml", []byte(head+"load: {model: closed, clients: [2, 4]}\n"+k8s))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kubernetes.Coordinator != "10.0.0.5:7070" {
		t.Fatalf("coordinator %q", s.Kubernetes.Coordinator)
	}
	if err := s.CheckAgentPods(2); err != nil {
		t.Fatalf("2 pods for 2 and 4 clients: %v", err)
	}
	if err := s.CheckAgentPods(3); err == nil || !strings.Contains(err.Error(), "2 clients cannot be dealt out to 3 agents") {
		t.Fatalf("3 pods for 2 clients: %v", err)
	}
	if s.Load.Agents != nil {
		t.Fatal("CheckAgentPods changed the spec's load.agents")
	}
	bare, err := Parse("k.yaml", []byte(head+"load: {model: open, rates: [10]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.CheckAgentPods(1); err == nil || !strings.Contains(err.Error(), "kubernetes: required section is missing") {
		t.Fatalf("no kubernetes: section: %v", err)
	}
	for _, bad := range []string{":7070", "10.0.0.5", "10.0.0.5:http", "h:70000"} {
		_, err := Parse("k.yaml", []byte(head+"load: {model: open, rates: [10]}\nkubernetes: {image: i, coordinator: \""+bad+"\"}\n"))
		if err == nil || !strings.Contains(err.Error(), "kubernetes.coordinator") {
			t.Errorf("coordinator %q: %v", bad, err)
		}
	}
}

package spec

import (
	"strings"
	"testing"
)

// The kubernetes: section parses, and its mistakes are named with their line.
func TestKubernetesSection(t *testing.T) {
	base := "name: k\ntarget: {type: null}\nworkload: {ycsb: a, record_count: 10}\nload: {model: open, rates: [10]}\nphases: {measure: 1s}\n"
	s, err := Parse("k.yaml", []byte(base+"kubernetes: {namespace: load, image: reg/headroom:1, cpu: 500m, memory: 512Mi, region: eu-west, start_timeout: 2m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Kubernetes; k == nil || k.Image != "reg/headroom:1" || k.CPU != "500m" || k.Region != "eu-west" || k.StartTimeout.Minutes() != 2 {
		t.Fatalf("kubernetes = %+v", s.Kubernetes)
	}
	_, err = Parse("k.yaml", []byte(base+"kubernetes:\n  namespace: Load_Test\n  cpu: two\n"))
	for _, want := range []string{"kubernetes.namespace", "kubernetes.image: required", `kubernetes.cpu: "two" is not a Kubernetes quantity`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

package spec

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kubernetes is the kubernetes: section: where `headroom run --agents
// k8s:N` launches its load agents, as an Indexed Job (internal/agent/k8s).
// No credentials go here: the cluster is reached with the
// kubeconfig (KUBECONFIG, ~/.kube/config, or the in-cluster account).
type Kubernetes struct {
	Namespace string `yaml:"namespace"` // default "default"
	// Image holds the headroom binary on its PATH, of the coordinator's
	// version.
	Image  string `yaml:"image"`
	CPU    string `yaml:"cpu"`    // each agent pod's request and limit, e.g. "1" or "500m"
	Memory string `yaml:"memory"` // e.g. "512Mi"
	// Region places the pods on nodes labelled
	// topology.kubernetes.io/region=REGION; the agents carry it as their
	// region label.
	Region string `yaml:"region"`
	// StartTimeout bounds the wait for every pod to run (default 5m).
	StartTimeout Duration `yaml:"start_timeout"`
	// Coordinator is the HOST:PORT the pods dial: this machine as the
	// cluster's network reaches it. The coordinator listens on PORT on
	// every address (port 0: any free port, when HOST is this machine's).
	// Default: load.agents.listen, when that names a host.
	Coordinator string `yaml:"coordinator"`
}

var (
	k8sName     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	k8sQuantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$`)
)

// kubernetes checks the kubernetes: section.
func (c *checker) kubernetes(k *Kubernetes) {
	if k.Namespace != "" && !k8sName.MatchString(k.Namespace) {
		c.fail("kubernetes.namespace", "%q is not a Kubernetes namespace name (lower case letters, digits and '-')", k.Namespace)
	}
	if strings.TrimSpace(k.Image) == "" {
		c.fail("kubernetes.image", "required: an image whose PATH holds the headroom binary, e.g. registry.example/headroom:1.0")
	}
	for field, q := range map[string]string{"cpu": k.CPU, "memory": k.Memory} {
		if q != "" && !k8sQuantity.MatchString(q) {
			c.fail("kubernetes."+field, "%q is not a Kubernetes quantity (e.g. cpu 500m or 2, memory 512Mi)", q)
		}
	}
	if k.StartTimeout.Duration < 0 {
		c.fail("kubernetes.start_timeout", "must be positive")
	}
	if k.Coordinator != "" {
		host, port, err := net.SplitHostPort(k.Coordinator)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 0 || p > 65535 {
			c.fail("kubernetes.coordinator", "%q is not HOST:PORT with a host the pods reach this machine by (e.g. 10.0.0.5:7070)", k.Coordinator)
		}
	}
}

// CheckAgentPods checks s for a run whose load comes from n agent pods
// (headroom run --agents k8s:N, which takes load.agents' place): the
// kubernetes: section must be there, and the load must split n ways
// under load.agents' rules.
func (s *Spec) CheckAgentPods(n int) error {
	c := &checker{file: s.File}
	if s.Kubernetes == nil {
		c.missing("kubernetes", "--agents k8s:N launches its agents as described there; add kubernetes: {image: IMAGE, coordinator: HOST:PORT}")
	}
	pods := *s
	pods.Load.Agents = &Agents{Hosts: slices.Repeat([]string{LocalAgent}, n)}
	c.agents(&pods)
	if len(c.errs) == 0 {
		return nil
	}
	return c.errs
}

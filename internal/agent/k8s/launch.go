// Package k8s launches load agents as pods of a Kubernetes Indexed Job
// (headroom run --agents k8s:N): N pods, each running `headroom agent
// --connect COORDINATOR --name NAME-INDEX --token-file FILE`, which connect
// back to the coordinator. The token is in a Secret mounted as a file,
// never in the pod's arguments or environment. The launcher waits until
// every pod runs (naming the pods stuck and why when they do not) and
// deletes the Job and the Secret at the end, also when the run is
// interrupted. It talks to the cluster only through client-go's
// kubernetes.Interface, so its tests use client-go's fake clientset.
package k8s

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Config is one launch of agents.
type Config struct {
	Agents      int    // N, the Job's completions and parallelism
	Coordinator string // HOST:PORT the agents connect to
	Token       string // the shared secret an agent proves itself with
	Image       string // an image whose PATH has the headroom binary
	Namespace   string // default "default"
	// Name is the Job's and the Secret's name and the agents' name prefix
	// (agent i is NAME-i); default "headroom-agents".
	Name string
	// CPU and Memory are each pod's requests and limits (equal, so the
	// pods get the Guaranteed class and a load generator is not starved),
	// in Kubernetes quantities, e.g. "1" and "512Mi"; "" = none.
	CPU, Memory string
	// Region, when set, places the pods on nodes labelled
	// topology.kubernetes.io/region=Region.
	Region string
	// Timeout bounds the wait for every pod to run (default 5 min).
	Timeout time.Duration
	// Poll is how often the wait looks (default 1 s).
	Poll time.Duration
	// Env holds the environment variables the spec's target options name
	// (password_env, auth_header_env...), with their values from the
	// coordinator's environment: they travel in the Secret, reach each
	// pod's agent as variables from it, and are the only ones the agent is
	// allowed to read (--allow-env).
	Env map[string]string
}

// Names of what the launcher makes.
const (
	// TokenDir is where the Secret is mounted; the token is TokenDir/token.
	TokenDir = "/var/run/headroom"
	tokenKey = "token"
	// LaunchLabel marks the Job, its pods and the Secret with the Job's name.
	LaunchLabel = "headroom.dev/launch"
	regionLabel = "topology.kubernetes.io/region"
	indexEnv    = "AGENT_INDEX"
	// envKeyPrefix starts the Secret's key of each variable in Env.
	envKeyPrefix = "env-"
	indexAnnot   = "batch.kubernetes.io/job-completion-index"
)

// envName is what a variable of Env may be called.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// dnsLabel is what Kubernetes accepts as a Job name (kept short enough
// for the pods' generated names).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,50}[a-z0-9])?$`)

// ParseAgents reads an --agents value of the form k8s:N.
func ParseAgents(v string) (int, error) {
	rest, ok := strings.CutPrefix(v, "k8s:")
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || n < 1 {
		return 0, fmt.Errorf("--agents %q: write k8s:N with N >= 1 agent pods, e.g. k8s:4", v)
	}
	return n, nil
}

// check fills the defaults and says in one sentence what is wrong.
func (c *Config) check() error {
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Name == "" {
		c.Name = "headroom-agents"
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	switch {
	case c.Agents < 1:
		return fmt.Errorf("kubernetes agents: %d agents; launch at least 1", c.Agents)
	case c.Image == "":
		return errors.New("kubernetes agents: no image; name one whose PATH holds the headroom binary (kubernetes.image)")
	case c.Coordinator == "":
		return errors.New("kubernetes agents: no coordinator address for the agents to connect to")
	case c.Token == "":
		return errors.New("kubernetes agents: no token; the coordinator makes one per run")
	case !dnsLabel.MatchString(c.Name):
		return fmt.Errorf("kubernetes agents: name %q is not a DNS label (lower case letters, digits and '-', at most 52 characters)", c.Name)
	}
	for name := range c.Env {
		if !envName.MatchString(name) || name == indexEnv {
			return fmt.Errorf("kubernetes agents: %q cannot be an environment variable of the pods; name variables with letters, digits and '_'", name)
		}
	}
	for what, q := range map[string]string{"cpu": c.CPU, "memory": c.Memory} {
		if _, err := resource.ParseQuantity(q); q != "" && err != nil {
			return fmt.Errorf("kubernetes agents: %s %q is not a Kubernetes quantity (e.g. cpu 500m or 2, memory 512Mi)", what, q)
		}
	}
	return nil
}

// Launcher is one launch: made by New, started by Launch, undone by Stop.
type Launcher struct {
	client kubernetes.Interface
	cfg    Config
}

// New checks cfg and returns its launcher.
func New(client kubernetes.Interface, cfg Config) (*Launcher, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return &Launcher{client: client, cfg: cfg}, nil
}

// AgentNames are the names the agents connect with, index order.
func (l *Launcher) AgentNames() []string {
	out := make([]string, l.cfg.Agents)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", l.cfg.Name, i)
	}
	return out
}

// Launch creates the Secret and the Job and waits until every pod runs.
// On any failure, an interrupt (ctx ending) included, it deletes what it
// made before returning. After a successful Launch the caller must Stop.
func (l *Launcher) Launch(ctx context.Context) error {
	err := l.create(ctx)
	if err == nil {
		err = l.waitRunning(ctx)
	}
	if err != nil {
		if serr := l.Stop(); serr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, serr)
		}
	}
	return err
}

func (l *Launcher) create(ctx context.Context) error {
	c := l.cfg
	if _, err := l.client.CoreV1().Secrets(c.Namespace).Create(ctx, l.Secret(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubernetes agents: cannot create Secret %s/%s: %v", c.Namespace, c.Name, err)
	}
	if _, err := l.client.BatchV1().Jobs(c.Namespace).Create(ctx, l.Job(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubernetes agents: cannot create Job %s/%s: %v", c.Namespace, c.Name, err)
	}
	return nil
}

// Secret is the Secret holding the token and the variables of Env.
func (l *Launcher) Secret() *corev1.Secret {
	data := map[string][]byte{tokenKey: []byte(l.cfg.Token)}
	for name, v := range l.cfg.Env {
		data[envKeyPrefix+name] = []byte(v)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: l.cfg.Name, Namespace: l.cfg.Namespace, Labels: l.labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

func (l *Launcher) labels() map[string]string {
	return map[string]string{LaunchLabel: l.cfg.Name, "app.kubernetes.io/name": "headroom-agent"}
}

// Job is the Indexed Job of the agents: N completions, all at once, no
// retries (an agent that dies marks its share of the run, it is not
// replaced by a fresh one that missed the start), the token mounted
// read-only from the Secret.
func (l *Launcher) Job() *batchv1.Job {
	c := l.cfg
	n := int32(c.Agents)
	indexed := batchv1.IndexedCompletion
	mode := int32(0o400)
	noRetry := int32(0)
	ttl := int32(3600) // if the coordinator dies before Stop, the cluster still cleans up
	res := corev1.ResourceRequirements{}
	if c.CPU != "" || c.Memory != "" {
		res.Requests, res.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: c.CPU, corev1.ResourceMemory: c.Memory} {
			if q != "" {
				res.Requests[name] = resource.MustParse(q)
				res.Limits[name] = resource.MustParse(q)
			}
		}
	}
	args := []string{"agent", "--connect", c.Coordinator,
		"--name", c.Name + "-$(" + indexEnv + ")", "--token-file", TokenDir + "/" + tokenKey}
	env := []corev1.EnvVar{{Name: indexEnv, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + indexAnnot + "']"}}}}
	for _, name := range slices.Sorted(maps.Keys(c.Env)) {
		args = append(args, "--allow-env", name)
		env = append(env, corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: c.Name}, Key: envKeyPrefix + name}}})
	}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:         "agent",
			Image:        c.Image,
			Command:      []string{"headroom"},
			Args:         args,
			Env:          env,
			Resources:    res,
			VolumeMounts: []corev1.VolumeMount{{Name: "token", MountPath: TokenDir, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: c.Name, DefaultMode: &mode}}}},
	}
	if c.Region != "" {
		pod.NodeSelector = map[string]string{regionLabel: c.Region}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, Labels: l.labels()},
		Spec: batchv1.JobSpec{
			Completions:             &n,
			Parallelism:             &n,
			CompletionMode:          &indexed,
			BackoffLimit:            &noRetry,
			TTLSecondsAfterFinished: &ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l.labels()},
				Spec:       pod,
			},
		},
	}
}

// Stop deletes the Job (its pods with it) and the Secret. It works on its
// own context, so that it also cleans up after an interrupt; what is
// already gone is not an error.
func (l *Launcher) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := l.cfg
	bg := metav1.DeletePropagationBackground
	var errs []error
	if err := l.client.BatchV1().Jobs(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("kubernetes agents: cannot delete Job %s/%s: %v; delete it with kubectl delete job -n %s %s", c.Namespace, c.Name, err, c.Namespace, c.Name))
	}
	if err := l.client.CoreV1().Secrets(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("kubernetes agents: cannot delete Secret %s/%s: %v; delete it with kubectl delete secret -n %s %s", c.Namespace, c.Name, err, c.Namespace, c.Name))
	}
	return errors.Join(errs...)
}

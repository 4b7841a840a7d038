package campaign

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/agent"
	"github.com/headroom-dev/headroom/internal/spec"
	_ "github.com/headroom-dev/headroom/internal/target/http"
)

// authServer is an HTTP target that records the Authorization header of
// every request it answers.
type authServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newAuthServer(t *testing.T) *authServer {
	s := &authServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths)
}

// authSpec is a one-agent spec of the http target at url whose
// Authorization header comes from the variable env.
func authSpec(url, env string) string {
	return fmt.Sprintf(`
name: agent-env
target: {type: http, base_url: %q, read: {path: "/r/{key}"}, auth_header_env: %s}
workload: {ycsb: c, record_count: 100}
load: {model: closed, clients: [2], agents: {hosts: [local]}}
phases: {warmup: 1s, measure: 1s, populate: false}
interval: 1s
monitor: {enabled: false}
`, url, env)
}

// An agent reads a variable a spec's target names only when its operator
// allowed it: otherwise the order is refused with one sentence naming the
// option, the variable and the flag, before the target is touched; allowed,
// the share runs and every request carries the variable's value.
func TestAgentReadsOnlyAllowedVariables(t *testing.T) {
	const env, value = "HEADROOM_TEST_AGENT_AUTH", "Bearer agent-env-test"
	t.Setenv(env, value)
	srv := newAuthServer(t)
	order := agent.Order{Spec: authSpec(srv.URL, env), SpecFile: "agent-env.yaml", Share: agent.Share{Index: 0, Of: 1, Clients: 1, Seed: 7},
		Phases: &agent.Phases{Measure: int64(300 * time.Millisecond), Interval: int64(100 * time.Millisecond)}}

	for _, allow := range [][]string{nil, {"SOME_OTHER_VARIABLE"}} {
		_, err := AgentRunner{Dir: t.TempDir(), AllowEnv: allow}.Prepare(context.Background(), order)
		want := "the spec's target.auth_header_env names the environment variable " + env + ", which this agent is not allowed to read; if it should send it, start the agent with --allow-env " + env
		if err == nil || err.Error() != want {
			t.Errorf("allowed %v: %v\nwant: %s", allow, err, want)
		}
		if err != nil && strings.Contains(err.Error(), value) {
			t.Error("the refusal shows the variable's value")
		}
	}
	if n := len(srv.seen()); n != 0 {
		t.Fatalf("the target got %d requests from a refused order", n)
	}

	p, err := AgentRunner{Dir: t.TempDir(), AllowEnv: []string{"OTHER", env}}.Prepare(context.Background(), order)
	if err != nil {
		t.Fatalf("allowed: %v", err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), time.Now(), func(agent.IntervalMsg) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	auths := srv.seen()
	if len(auths) == 0 || res.Measured.Completed == 0 {
		t.Fatalf("the allowed share sent %d requests (%d completed)", len(auths), res.Measured.Completed)
	}
	for i, a := range auths {
		if a != value {
			t.Fatalf("request %d carried Authorization %q, want the variable's value", i, a)
		}
	}
}

// envOptions finds *_env options wherever a target's options hold them.
func TestEnvOptionsFindsNestedVariables(t *testing.T) {
	type inner struct {
		KeyEnv string `yaml:"key_env"`
		Plain  string `yaml:"plain"`
	}
	type base struct {
		PasswordEnv string `yaml:"password_env"`
	}
	type opts struct {
		base     `yaml:",inline"`
		TokenEnv string           `yaml:"token_env"`
		Unset    string           `yaml:"unset_env"`
		Skip     string           `yaml:"-"`
		DB       *inner           `yaml:"db"`
		Nodes    []inner          `yaml:"nodes"`
		Named    map[string]inner `yaml:"named"`
	}
	o := &opts{base: base{PasswordEnv: "PW"}, TokenEnv: "TOK", DB: &inner{KeyEnv: "DBKEY", Plain: "x_env"},
		Nodes: []inner{{}, {KeyEnv: "N1"}}, Named: map[string]inner{"b": {KeyEnv: "B"}, "a": {KeyEnv: "A"}}}
	var got []string
	for _, f := range envOptions(o) {
		got = append(got, f.key+"="+f.name)
	}
	want := []string{"password_env=PW", "token_env=TOK", "db.key_env=DBKEY", "nodes[1].key_env=N1", "named.a.key_env=A", "named.b.key_env=B"}
	if !slices.Equal(got, want) {
		t.Errorf("envOptions: %v, want %v", got, want)
	}
}

// The coordinator listens on loopback when every agent is a process on
// this machine, and on every address when one is on another host.
func TestListenAddressOfTheFleet(t *testing.T) {
	for _, c := range []struct {
		a    spec.Agents
		want string
	}{
		{spec.Agents{Hosts: []string{spec.LocalAgent, spec.LocalAgent}}, "127.0.0.1:0"},
		{spec.Agents{Hosts: []string{spec.LocalAgent, "load1"}}, "0.0.0.0:0"},
		{spec.Agents{Hosts: []string{spec.LocalAgent}, Listen: "0.0.0.0:7070"}, "0.0.0.0:7070"},
	} {
		if got := listenAddress(&c.a); got != c.want {
			t.Errorf("hosts %v listen %q: %s, want %s", c.a.Hosts, c.a.Listen, got, c.want)
		}
	}
}

// Agents started on this machine get PATH, HOME, TMPDIR, the token and
// the variables the spec's target names, and are allowed exactly those;
// none of the coordinator's other variables. The coordinator, all of
// whose agents are local, listens on loopback only.
func TestLocalAgentsGetOnlyTheTargetsVariables(t *testing.T) {
	const env = "HEADROOM_TEST_AGENT_AUTH"
	t.Setenv(env, "Bearer local-agent-test")
	t.Setenv("HEADROOM_TEST_COORDINATOR_SECRET", "stays-with-the-coordinator")
	dir := t.TempDir()
	bin := buildHeadroom(t, dir)
	srv := newAuthServer(t)
	s := parse(t, dir, strings.Replace(authSpec(srv.URL, env), "hosts: [local]", "hosts: [local, local], binary: "+bin, 1))
	f, err := startFleet(context.Background(), s, nil, func(n string) { t.Log(n) }, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.close()

	if addr := f.coord.Addr().(*net.TCPAddr); !addr.IP.IsLoopback() {
		t.Errorf("the coordinator of local agents listens on %s, not loopback", addr)
	}
	want := []string{"HOME", "PATH", "TMPDIR", agent.TokenEnv, env}
	for _, p := range f.procs {
		environ, err := os.ReadFile(filepath.Join("/proc", fmt.Sprint(p.cmd.Process.Pid), "environ"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for kv := range strings.SplitSeq(strings.TrimRight(string(environ), "\x00"), "\x00") {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		slices.Sort(names)
		exp := slices.DeleteFunc(slices.Clone(want), func(n string) bool { _, ok := os.LookupEnv(n); return !ok && n != agent.TokenEnv })
		slices.Sort(exp)
		if !slices.Equal(names, exp) {
			t.Errorf("agent %s's environment holds %v, want %v", p.name, names, exp)
		}
		args := p.cmd.Args
		if i := slices.Index(args, "--allow-env"); i < 0 || args[i+1] != env || slices.Index(args[i+1:], "--allow-env") >= 0 {
			t.Errorf("agent %s was started with %v; want --allow-env %s only", p.name, args, env)
		}
	}
}

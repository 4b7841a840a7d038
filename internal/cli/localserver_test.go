package cli

import (
	"os"
	"runtime"
	"testing"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/load"
	"github.com/headroom-dev/headroom/internal/spec"
	redistarget "github.com/headroom-dev/headroom/internal/target/redis"
)

func TestServerOnThisMachine(t *testing.T) {
	type addr struct{ Address string }
	type hostPort struct {
		Host    string
		Port    int
		Managed *deploy.Managed
	}
	for _, c := range []struct {
		name string
		opts any
		want bool
	}{
		{"loopback address", &addr{"127.0.0.1:6379"}, true},
		{"localhost", &hostPort{Host: "localhost", Port: 5432}, true},
		{"IPv6 loopback", &addr{"[::1]:6379"}, true},
		{"managed", &hostPort{Host: "10.200.0.9", Managed: &deploy.Managed{}}, true},
		{"remote address", &addr{"192.0.2.7:6379"}, false},
		{"remote name", &hostPort{Host: "db.example.com"}, false},
		{"no options", nil, false},
		{"not a struct", new(int), false},
	} {
		if got := serverOnThisMachine(c.opts); got != c.want {
			t.Errorf("%s: serverOnThisMachine(%+v) = %v, want %v", c.name, c.opts, got, c.want)
		}
	}
}

// A Redis on this machine is left a core; a remote one, and PostgreSQL on
// this machine (many server processes), keep every slot.
func TestWidenSchedulerLeavesALocalRedisACore(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment; widenScheduler leaves it alone")
	}
	defer runtime.GOMAXPROCS(startProcs)
	defer load.SetCPUBudget(startProcs)
	want := max(startProcs-1, 1)
	for _, c := range []struct {
		name string
		s    *spec.Spec
		want int
	}{
		{"local redis", &spec.Spec{Target: spec.Target{Type: "redis", Options: &redistarget.Options{Address: "127.0.0.1:6379"}}}, want},
		{"remote redis", &spec.Spec{Target: spec.Target{Type: "redis", Options: &redistarget.Options{Address: "192.0.2.7:6379"}}}, startProcs},
		{"local postgres", &spec.Spec{Target: spec.Target{Type: "postgres", Options: &struct{ Host string }{"127.0.0.1"}}}, startProcs},
	} {
		widenScheduler(c.s)
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("%s: GOMAXPROCS = %d, want %d", c.name, got, c.want)
		}
	}
}

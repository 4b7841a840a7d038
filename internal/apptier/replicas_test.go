package apptier

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
)

// startCluster runs a private PostgreSQL primary with replicas-1... on
// this machine for the test: nodes in all, the primary first.
func startCluster(t *testing.T, nodes int) *deploy.PostgresCluster {
	t.Helper()
	pc, err := deploy.StartPostgresCluster(context.Background(), filepath.Join(labtest.SearchableDir(t), "pg"),
		deploy.Managed{Settings: map[string]string{}, Cluster: &deploy.Cluster{Nodes: nodes}})
	labtest.StartedOrSkip(t, err)
	t.Cleanup(func() { pc.Remove(context.Background()) })
	return pc
}

// replicaCounts reads GET /admin/replicas into a map (primary, retried
// and one key per replica).
func replicaCounts(t *testing.T, base string) map[string]int {
	t.Helper()
	resp, err := http.Get(base + PathReplicas)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var k string
		var n int
		if _, err := fmt.Sscanf(strings.Replace(line, "\t", " ", 1), "%s %d", &k, &n); err != nil {
			t.Fatalf("GET %s: line %q: %v", PathReplicas, line, err)
		}
		out[k] = n
	}
	return out
}

// An application server in front of a real primary with two streaming
// replicas: reads and scans go round-robin over the replicas it was
// given, writes to the primary; a new list replaces the set, closing the
// pools of replicas no longer listed; a replica that went away costs a
// retry on the primary, not a failed read; a prepare empties the set.
func TestServerReadsFromReplicas(t *testing.T) {
	pc := startCluster(t, 3)
	p := pc.Primary()
	dsn := (&url.URL{Scheme: "postgres", User: url.UserPassword(p.User, p.Password), Host: p.Addr(), Path: "/" + p.Database}).String()
	reps := pc.Replicas()
	r1, r2 := reps[0].Inst.Addr(), reps[1].Inst.Addr()

	s, err := NewServer(Config{Listen: "127.0.0.1:0", DSN: dsn, Pool: 4, Table: "usertable"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	call := func(method, path, body string) (int, string) {
		t.Helper()
		code, b, _ := httpCall(t, hs.URL, method, path, body)
		return code, b
	}
	if code, body := call("POST", PathReplicas, r1); code != http.StatusConflict || !strings.Contains(body, "not prepared") {
		t.Fatalf("replicas before prepare: %d %q", code, body)
	}
	if code, body := call("POST", PathPrepare+"?fields=2&ddl=1&fresh=1", ""); code != 200 {
		t.Fatalf("prepare: %d %q", code, body)
	}
	var load bytes.Buffer
	for i := range 20 {
		fmt.Fprintf(&load, "user%02d\ta%d\tb%d\n", i, i, i)
	}
	if code, body := call("POST", PathLoad, load.String()); code != 200 {
		t.Fatalf("load: %d %q", code, body)
	}
	ctx := context.Background()
	if err := pc.WaitReplayed(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}

	// Bad lists are refused and leave the set as it was.
	for _, c := range []struct{ body, want string }{
		{"nohost", `replica "nohost" is not HOST:PORT`},
		{"u:pw@h:5432", `is not HOST:PORT`},
		{"127.0.0.1:1", "replica 127.0.0.1:1"},
	} {
		if code, body := call("POST", PathReplicas, c.body); code == 200 || !strings.Contains(body, c.want) || strings.Contains(body, p.Password) {
			t.Errorf("replicas %q: %d %q; want an error with %q, without the password", c.body, code, body, c.want)
		}
	}

	if code, body := call("POST", PathReplicas, r1+"\n"+r2+"\n"); code != 200 || body != "ok: 2 replicas\n" {
		t.Fatalf("two replicas: %d %q", code, body)
	}
	if n := testing.AllocsPerRun(100, func() { r, _ := s.replicas.Pick(); r.Release() }); n != 0 {
		t.Fatalf("picking a replica allocates %v times", n)
	}
	before := replicaCounts(t, hs.URL)
	for i := range 20 {
		path := PathRead + "?key=user07"
		if i%2 == 1 {
			path = PathScan + "?key=user18&n=5&field=1"
		}
		code, body := call("GET", path, "")
		if want := map[bool]string{false: "a7\tb7\n", true: "b18\nb19\n"}[i%2 == 1]; code != 200 || body != want {
			t.Fatalf("GET %s on the replicas: %d %q, want %q", path, code, body, want)
		}
	}
	after := replicaCounts(t, hs.URL)
	if d1, d2, dp := after[r1]-before[r1], after[r2]-before[r2], after["primary"]-before["primary"]; d1 != 10 || d2 != 10 || dp != 0 {
		t.Fatalf("20 reads and scans: %d on %s, %d on %s, %d on the primary; want 10, 10, 0", d1, r1, d2, r2, dp)
	}
	// Writes, and the read of a read-modify-write, go to the primary:
	// a replica replays them, it does not take them.
	for _, c := range []struct{ method, path, body string }{
		{"POST", PathUpdate + "?key=user03&field=0", "A3"},
		{"POST", PathInsert + "?key=user99", "p\tq"},
		{"POST", PathRMW + "?key=user99&field=1", "Q"},
	} {
		if code, body := call(c.method, c.path, c.body); code != 200 {
			t.Fatalf("%s %s with replicas: %d %q", c.method, c.path, code, body)
		}
	}
	if c := replicaCounts(t, hs.URL); c[r1] != after[r1] || c[r2] != after[r2] {
		t.Fatalf("writes reached the replicas: %v after %v", c, after)
	}

	// A new list keeps the replicas still listed and closes the others'
	// pools, while reads go on from eight goroutines.
	var failed, ok atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(hs.URL + PathRead + "?key=user05")
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	first, second := s.replicas.Load()[0], s.replicas.Load()[1]
	for i, list := range []string{r2, "", r1 + "\n" + r2, r1} {
		time.Sleep(50 * time.Millisecond)
		if code, body := call("POST", PathReplicas, list); code != 200 {
			t.Fatalf("replicas %q: %d %q", list, code, body)
		}
		if i == 0 {
			if set := s.replicas.Load(); len(set) != 1 || set[0] != second {
				t.Fatalf("%s did not keep its pool when %s left", r2, r1)
			}
			if !first.Retired() || first.db.Ping() == nil || first.InFlight() != 0 {
				t.Fatalf("the replica %s that left: retired %v, in flight %d, or its pool still open", r1, first.Retired(), first.InFlight())
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if failed.Load() > 0 || ok.Load() < 50 {
		t.Fatalf("while the replica set changed: %d reads failed, %d succeeded", failed.Load(), ok.Load())
	}
	if set := s.replicas.Load(); len(set) != 1 || set[0].addr != r1 {
		t.Fatalf("set after the changes: %v", set)
	}
	if !second.Retired() || second.db.Ping() == nil {
		t.Fatalf("%s left with the empty list, but its pool is open", r2)
	}

	// A replica that goes away without the server being told: its reads
	// are answered by the primary.
	if code, body := call("POST", PathReplicas, r1+"\n"+r2); code != 200 {
		t.Fatalf("two replicas again: %d %q", code, body)
	}
	if _, err := pc.RemoveReplica(ctx, reps[1].Name); err != nil {
		t.Fatal(err)
	}
	before = replicaCounts(t, hs.URL)
	for range 10 {
		if code, body := call("GET", PathRead+"?key=user07", ""); code != 200 || body != "a7\tb7\n" {
			t.Fatalf("read with a replica gone: %d %q", code, body)
		}
	}
	after = replicaCounts(t, hs.URL)
	if d, dr := after["retried"]-before["retried"], after[r1]-before[r1]; d != 5 || dr != 5 {
		t.Fatalf("10 reads with %s gone: %d retried on the primary, %d on %s; want 5 and 5", r2, d, dr, r1)
	}

	// A prepare empties the set.
	if code, body := call("POST", PathPrepare+"?fields=2", ""); code != 200 {
		t.Fatalf("prepare again: %d %q", code, body)
	}
	if c := replicaCounts(t, hs.URL); len(c) != 2 {
		t.Fatalf("replicas after a prepare: %v", c)
	}
	if code, body := call("GET", PathRead+"?key=user07", ""); code != 200 || body != "a7\tb7\n" {
		t.Fatalf("read after the prepare: %d %q", code, body)
	}
}

package apptier

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

var _ target.NodeScaler = (*Target)(nil)

// steadyLoad sends YCSB B operations (reads, some updates) from several
// request slots until stopped, counting what succeeded and what failed.
type steadyLoad struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []error // the first few failures
	stop       chan struct{}
	wg         sync.WaitGroup
}

// prepareAndLoad prepares tgt's table and inserts records through it; it
// returns the generator of the operations that read them.
func prepareAndLoad(t *testing.T, tgt *Target, records int64) *workload.Generator {
	t.Helper()
	w, _ := workload.Preset("b")
	w.RecordCount, w.FieldCount, w.FieldLength = records, 3, 8
	ctx := context.Background()
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var batch []*workload.Op
	for i := range records {
		op := gen.NewOp()
		gen.Populate(i, op)
		batch = append(batch, op)
	}
	if err := c.(target.Loader).LoadBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return gen
}

// startLoad runs slots request slots against tgt until the returned load
// is stopped (by t.Cleanup at the latest).
func startLoad(t *testing.T, tgt *Target, gen *workload.Generator, slots int) *steadyLoad {
	t.Helper()
	l := &steadyLoad{stop: make(chan struct{})}
	for i := range slots {
		c, err := tgt.NewClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		g := gen.Fork(uint64(i + 1))
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			op := g.NewOp()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				g.Next(op)
				if err := c.Do(context.Background(), op); err != nil {
					l.failed.Add(1)
					l.mu.Lock()
					if len(l.errs) < 5 {
						l.errs = append(l.errs, err)
					}
					l.mu.Unlock()
					continue
				}
				l.ok.Add(1)
			}
		}()
	}
	t.Cleanup(l.end)
	return l
}

// end stops the load and waits for the requests in flight.
func (l *steadyLoad) end() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// check fails t if any request failed.
func (l *steadyLoad) check(t *testing.T, when string) {
	t.Helper()
	if n := l.failed.Load(); n > 0 {
		l.mu.Lock()
		defer l.mu.Unlock()
		t.Fatalf("%s: %d of %d requests failed, e.g. %v", when, n, n+l.ok.Load(), errors.Join(l.errs...))
	}
}

// serverNamed is the running server of that name, or nil.
func (tgt *Target) serverNamed(name string) *appServer {
	for _, a := range tgt.servers() {
		if a.name == name {
			return a
		}
	}
	return nil
}

// checkChange checks the times and fields every node change has.
func checkChange(t *testing.T, ch deploy.NodeChange, action, node, host string) {
	t.Helper()
	if ch.Action != action || ch.Node != node || ch.Host != host || ch.BytesStreamed != -1 || ch.Error != "" || ch.Detail == "" ||
		ch.Requested.IsZero() || ch.Started.Before(ch.Requested) || ch.Done.Before(ch.Started) {
		t.Fatalf("%s change %+v; want node %s on host %q, ordered times, no bytes streamed", action, ch, node, host)
	}
	t.Logf("%s %s: started after %v, done after %v: %s", action, node, ch.Started.Sub(ch.Requested), ch.Done.Sub(ch.Requested), ch.Detail)
}

// nodeNames lists the names of the tier's nodes, checking their role and
// host.
func nodeNames(t *testing.T, tgt *Target, lab bool) []string {
	t.Helper()
	var out []string
	for _, n := range tgt.Nodes() {
		if n.Role != "app" || (n.Host == n.Name) != lab || n.Inst != nil {
			t.Fatalf("node %+v: want role app, host = name only in a lab", n)
		}
		out = append(out, n.Name)
	}
	return out
}

// An application server added on this machine while eight request slots
// run takes half of the requests once it serves; removed while they run,
// it leaves without a request failing; the last server cannot be removed.
func TestAddAndRemoveLocalServerUnderLoad(t *testing.T) {
	o := defaultOptions()
	o.App.Pool = 4
	o.App.CPUWork.Duration = 200 * time.Microsecond // requests that take a moment, so that some are in flight at a removal
	tgt := openLocal(t, o)
	gen := prepareAndLoad(t, tgt, 200)
	ctx := context.Background()

	if _, err := tgt.AddNode(ctx, "app2"); err == nil || !strings.Contains(err.Error(), "the campaign has no lab") {
		t.Fatalf("adding a lab host without a lab: %v", err)
	}
	if _, err := tgt.RemoveNode(ctx, "local1"); err == nil || !strings.Contains(err.Error(), "local1 is the tier's last application server") {
		t.Fatalf("removing the last server: %v", err)
	}

	load := startLoad(t, tgt, gen, 8)
	time.Sleep(300 * time.Millisecond)
	ch, err := tgt.AddNode(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	checkChange(t, ch, "add_node", "local2", "")
	if got := nodeNames(t, tgt, false); !slices.Equal(got, []string{"local1", "local2"}) {
		t.Fatalf("nodes %v after adding one", got)
	}
	if pids := tgt.ServerPIDs(); len(pids) != 3 {
		t.Fatalf("server PIDs %v: want the database and two application servers", pids)
	}
	old, added := tgt.serverNamed("local1"), tgt.serverNamed("local2")
	old0, added0 := old.answered.Load(), added.answered.Load()
	time.Sleep(500 * time.Millisecond)
	dOld, dAdded := old.answered.Load()-old0, added.answered.Load()-added0
	// Round robin over one counter: the two servers take turns.
	if dAdded < 50 || float64(dAdded) < 0.4*float64(dOld+dAdded) {
		t.Fatalf("in 0.5 s after the add, local1 answered %d requests and the new local2 %d; want about half each", dOld, dAdded)
	}
	load.check(t, "while adding a server")

	ch, err = tgt.RemoveNode(ctx, "local2")
	if err != nil {
		t.Fatal(err)
	}
	checkChange(t, ch, "remove_node", "local2", "")
	select {
	case <-added.exited:
	default:
		t.Fatal("local2's process still runs after RemoveNode")
	}
	if n := added.InFlight(); n != 0 {
		t.Fatalf("%d requests in flight on the removed server", n)
	}
	before := load.ok.Load()
	time.Sleep(200 * time.Millisecond)
	if load.ok.Load()-before < 50 {
		t.Fatalf("%d requests succeeded in 0.2 s after the removal", load.ok.Load()-before)
	}
	load.end()
	load.check(t, "while removing a server")
	if got := nodeNames(t, tgt, false); !slices.Equal(got, []string{"local1"}) {
		t.Fatalf("nodes %v after removing local2", got)
	}
	if pids := tgt.ServerPIDs(); len(pids) != 2 {
		t.Fatalf("server PIDs %v after the removal: want the database and local1", pids)
	}

	// A server added after a removal takes a new name; an unknown name
	// is refused with the servers there are; Close stops added servers.
	ch, err = tgt.AddNode(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	checkChange(t, ch, "add_node", "local3", "")
	_, err = tgt.RemoveNode(ctx, "local2")
	if want := `"local2" is not an application server of this tier; its servers are local1, local3`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("removing a gone server: %v; want %q", err, want)
	}
	last := tgt.serverNamed("local3")
	if err := tgt.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-last.exited:
	default:
		t.Fatal("Close left the added server running")
	}
}

// Picking a server reads the rotation without a lock or an allocation,
// and a server marked retired is passed over.
func TestPickSkipsRetiredServerWithoutAllocating(t *testing.T) {
	tgt := testTarget(nil)
	apps := append(tgt.servers(), newApp("app2", "10.0.0.2", 8080, nil))
	tgt.setServers(apps)
	tgt.rot.Store(apps)
	if n := testing.AllocsPerRun(100, func() { tgt.pick().Release() }); n != 0 {
		t.Fatalf("pick allocates %v times", n)
	}
	// The rotation as a slot read it just before app2 left: app2 is
	// marked retired, so pick passes it over.
	apps[1].Retire()
	seen := map[string]int{}
	for range 10 {
		a := tgt.pick()
		seen[a.name]++
		a.Release()
	}
	if seen["app1"] != 10 || apps[1].InFlight() != 0 || apps[0].InFlight() != 0 {
		t.Fatalf("picked %v; in flight %d, %d", seen, apps[0].InFlight(), apps[1].InFlight())
	}
}

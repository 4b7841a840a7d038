package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/progress"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// Event kinds the lab records.
const (
	eventLab       = "lab"        // the lab the campaign ran in: hosts, limits, prices
	eventFault     = "fault"      // an event of the spec's events: section, applied
	eventFaultUndo = "fault_undo" // the faults undone at the end of a run
)

// upLab brings up the spec's lab (or reuses one that is up with the same
// hosts) and records what it is made of.
func upLab(s *spec.Spec, specDir string, st *store.Store, prog progress.Reporter) (*lab.Lab, error) {
	hosts, cat, err := s.Lab.Resolve(specDir)
	if err != nil {
		return nil, err
	}
	name := s.Lab.Name
	if name == "" {
		name = s.Name
	}
	l, err := lab.Up(name, hosts, cat, lab.Options{Progress: func(line string) { prog.Note(line) }})
	if err != nil {
		return nil, err
	}
	detail, _ := json.Marshal(labRecord(l))
	if err := st.AddEvent(store.Event{Time: time.Now(), Kind: eventLab, Detail: string(detail)}); err != nil {
		_ = l.Close(s.Lab.Keep)
		return nil, err
	}
	return l, nil
}

// labRecord is what the results store keeps about a lab: enough to price
// and describe every host afterwards (the catalog's prices included).
func labRecord(l *lab.Lab) map[string]any {
	st := l.State()
	return map[string]any{"name": st.Name, "subnet": st.Subnet, "cgroups": st.Cgroups, "hosts": st.Hosts, "catalog": st.Catalog}
}

// placer puts managed servers on lab hosts for the target registry.
func placer(l *lab.Lab) func(host string) (*deploy.Placement, error) {
	return func(host string) (*deploy.Placement, error) {
		h, err := l.Host(host)
		if err != nil {
			return nil, err
		}
		return &deploy.Placement{
			Host: host, Address: h.Addr, ClientAddress: l.ClientAddr(), DataDir: h.VolumeDir,
			Wrap: func(cmd *exec.Cmd, uid, gid int) error { return l.Command(host, cmd, uid, gid) },
		}, nil
	}
}

// sources samples several monitor sources as one.
type sources []monitor.Source

func (ss sources) Sample(at time.Time) ([]monitor.Sample, error) {
	var out []monitor.Sample
	var errs []error
	for _, s := range ss {
		xs, err := s.Sample(at)
		out = append(out, xs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// faultRecord is the detail of a fault event.
type faultRecord struct {
	At     string `json:"at"` // offset into the measured phase
	Action string `json:"action"`
	Host   string `json:"host,omitempty"`
	Detail string `json:"detail"`
	Error  string `json:"error,omitempty"`
}

// startEvents applies the spec's events at their offsets from measureAt
// (the start of the run's measured phase) until stop is called. Each one
// is recorded as a fault event when it happens.
func (ex *executor) startEvents(ctx context.Context, id int64, measureAt time.Time) (stop func()) {
	if ex.lab == nil || len(ex.s.Events) == 0 {
		return func() {}
	}
	evs := append([]lab.Event(nil), ex.s.Events...)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At < evs[j].At })
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, e := range evs {
			t := time.NewTimer(time.Until(measureAt.Add(e.At)))
			select {
			case <-quit:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			ex.applyEvent(ctx, id, e)
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit); wg.Wait() }) }
}

func (ex *executor) applyEvent(ctx context.Context, id int64, e lab.Event) {
	detail, err := ex.lab.Apply(e)
	if errors.Is(err, lab.ErrStartService) {
		err = ex.startService(ctx)
		detail = "started the target's server again on " + e.Host
	}
	if e.Action == lab.ActKill {
		ex.killed = true
	}
	rec := faultRecord{At: e.At.String(), Action: e.Action, Host: e.Host, Detail: detail}
	if err != nil {
		rec.Error = err.Error()
	}
	b, _ := json.Marshal(rec)
	now := time.Now()
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: now, Kind: eventFault, Detail: string(b)})
	if err == nil {
		_ = ex.limits.record(ex.lab, now, e.Action)
	}
	ex.prog.Note(fmt.Sprintf("event at +%v: %s", e.At, detail))
}

func (ex *executor) startService(ctx context.Context) error {
	s, ok := ex.tgt.(target.ServerStarter)
	if !ok {
		return fmt.Errorf("the %s target does not run its own server, so Headroom cannot start it again", ex.s.Target.Type)
	}
	ex.killed = false
	return s.StartServer(ctx)
}

// undoEvents puts the lab back as defined after a run with events, and
// starts a killed server again, so that every run starts from the same
// set-up. It records what it did.
func (ex *executor) undoEvents(ctx context.Context, id int64) error {
	if ex.lab == nil || len(ex.s.Events) == 0 {
		return nil
	}
	err := ex.lab.ResetFaults()
	restarted := false
	if ex.killed {
		if serr := ex.startService(ctx); serr != nil {
			err = errors.Join(err, serr)
		} else {
			restarted = true
			if merr := ex.restartMonitor(); merr != nil {
				err = errors.Join(err, merr)
			}
		}
	}
	rec := map[string]any{"restarted_server": restarted}
	if err != nil {
		rec["error"] = err.Error()
	}
	b, _ := json.Marshal(rec)
	now := time.Now()
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: now, Kind: eventFaultUndo, Detail: string(b)})
	if lerr := ex.limits.record(ex.lab, now, "undo"); lerr != nil {
		err = errors.Join(err, lerr)
	}
	return err
}

package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// Event kinds of the infrastructure and its events.
const (
	eventLab       = "lab"        // the lab the campaign ran in: hosts, limits, prices
	eventFault     = "fault"      // an event of the spec's events: section, applied
	eventFaultUndo = "fault_undo" // the faults undone at the end of a run
)

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

// hostMonitors are the samplers of a provider's hosts.
type hostMonitors []infra.Monitor

// openHostMonitors opens the samplers of the provider's hosts (none for
// this machine, which the campaign samples with the spec's settings).
func openHostMonitors(hosts infra.Hosts) (hostMonitors, map[string]infra.Monitor, error) {
	var out hostMonitors
	byName := map[string]infra.Monitor{}
	for _, h := range hosts {
		m, err := h.Monitor()
		if err != nil {
			out.Close()
			return nil, nil, fmt.Errorf("monitoring host %s: %w", h.Name(), err)
		}
		if m != nil {
			out = append(out, m)
			byName[h.Name()] = m
		}
	}
	return out, byName, nil
}

// Close closes every sampler.
func (ms hostMonitors) Close() {
	for _, m := range ms {
		m.Close()
	}
}

// faultRecord is the detail of a fault event.
type faultRecord struct {
	At     string `json:"at"` // offset into the measured phase
	Action string `json:"action"`
	Host   string `json:"host,omitempty"`
	Detail string `json:"detail"`
	Error  string `json:"error,omitempty"`
	// Took is how long applying the event took; the event's time is when
	// it began.
	Took string `json:"took,omitempty"`
}

// startEvents applies the spec's events at their offsets from measureAt
// (the start of the run's measured phase) until stop is called. Each one
// is recorded as a fault event at the moment it began: a server's start
// returns once the server is ready, and the clients' first successes may
// come before that, so the end of an outage must not be dated by it.
func (ex *executor) startEvents(ctx context.Context, id int64, measureAt time.Time) (stop func()) {
	if len(ex.s.Events) == 0 {
		return func() {}
	}
	evs := append([]infra.Event(nil), ex.s.Events...)
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

func (ex *executor) applyEvent(ctx context.Context, id int64, e infra.Event) {
	began := time.Now()
	var detail string
	var err error
	switch {
	case e.Action == lab.ActPromote:
		detail, err = ex.applyPromote(ctx, id, e) // failure.go
		if err != nil {
			detail = fmt.Sprintf("promote %s failed: %v", hostOrLocal(e.Host), err)
		}
	case isNodeEvent(e):
		detail, err = ex.applyNodeEvent(ctx, id, e)
		if err != nil {
			detail = fmt.Sprintf("%s %s failed: %v", e.Action, hostOrLocal(e.Host), err)
		}
	case ex.faults == nil:
		err = fmt.Errorf("the %s provider applies no %s events", ex.setup.Provider.Name(), e.Action)
		detail = err.Error()
	default:
		detail, err = ex.faults.Apply(e)
	}
	if errors.Is(err, infra.ErrStartService) {
		err = ex.startService(ctx)
		detail = "started the target's server again on " + e.Host
	}
	if e.Action == lab.ActKill {
		ex.killed = true
	}
	now := time.Now()
	rec := faultRecord{At: e.At.String(), Action: e.Action, Host: e.Host, Detail: detail, Took: now.Sub(began).Round(time.Millisecond).String()}
	if err != nil {
		rec.Error = err.Error()
	}
	b, _ := json.Marshal(rec)
	_ = ex.st.AddEvent(store.Event{RunID: id, Time: began, Kind: eventFault, Detail: string(b)})
	if err == nil && !isNodeEvent(e) {
		_ = ex.setup.recordLimits(now, e.Action)
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

// undoEvents puts the hosts back as defined after a run with events, and
// starts a killed server again, so that every run starts from the same
// set-up. It records what it did.
func (ex *executor) undoEvents(ctx context.Context, id int64) error {
	if len(ex.s.Events) == 0 {
		// A controller's hosts (controller.go) go as an event's would.
		return ex.undoNodes(ctx, id)
	}
	// The cluster first: a node taken out comes back on a host that the
	// reset below then treats like the others.
	err := ex.undoNodes(ctx, id)
	if ex.faults == nil {
		return err
	}
	err = errors.Join(err, ex.faults.ResetFaults())
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
	if lerr := ex.setup.recordLimits(now, "undo"); lerr != nil {
		err = errors.Join(err, lerr)
	}
	return err
}

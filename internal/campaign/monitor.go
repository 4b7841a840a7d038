package campaign

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
	"github.com/headroom-dev/headroom/internal/monitor/procfs"
	"github.com/headroom-dev/headroom/internal/spec"
	"github.com/headroom-dev/headroom/internal/store"
	"github.com/headroom-dev/headroom/internal/target"
)

// newSampler builds this host's sampler from the spec's monitor section,
// or returns nil when monitoring is off. A named resource that does not
// exist is an error naming it (from procfs.New).
func newSampler(m spec.Monitor, extraPIDs []int) (*procfs.Sampler, error) {
	if m.Enabled != nil && !*m.Enabled {
		return nil, nil
	}
	cfg := procfs.Config{CPU: m.CPU == nil || *m.CPU, PerCore: m.PerCore, Memory: m.Memory == nil || *m.Memory, Cgroups: m.Cgroups}
	for _, d := range m.Disks {
		if d == "all" {
			cfg.AllDisks = true
		} else {
			cfg.Disks = append(cfg.Disks, d)
		}
	}
	for _, i := range m.Interfaces {
		if i == "all" {
			cfg.AllInterfaces = true
		} else {
			cfg.Interfaces = append(cfg.Interfaces, i)
		}
	}
	for _, p := range m.Processes {
		if p == "self" {
			cfg.PIDs = append(cfg.PIDs, os.Getpid())
			continue
		}
		pid, err := strconv.Atoi(p)
		if err != nil {
			return nil, fmt.Errorf("monitor.processes: %q is not a process ID", p)
		}
		if !slices.Contains(cfg.PIDs, pid) {
			cfg.PIDs = append(cfg.PIDs, pid)
		}
	}
	if len(m.Processes) > 0 {
		// Monitoring processes at all means the server's too. A server's
		// worker process may exit between listing and opening (a
		// PostgreSQL backend ending with its connection): procfs skips
		// those.
		for _, pid := range extraPIDs {
			if pid > 0 && !slices.Contains(cfg.PIDs, pid) {
				cfg.TransientPIDs = append(cfg.TransientPIDs, pid)
			}
		}
	}
	s, err := procfs.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	return s, nil
}

// startMonitor begins sampling for run id on the engine's interval
// boundaries from origin until end, the run's planned end: the engine
// stores no interval after it (requests still draining count in the last
// one), so a sample after it would describe no interval. It returns a
// function that stops sampling and records a monitoring failure as an
// event (monitoring problems never fail a run: the latency measurements
// stand on their own).
func (ex *executor) startMonitor(id int64, origin, end time.Time) func() {
	if ex.sampler == nil {
		return func() {}
	}
	// Live sources: a cluster event adds or removes hosts, and a restart
	// replaces the sampler of the server's processes, while this run is
	// sampled.
	ctl := ex.ctl
	live := &liveSources{list: []monitor.Source{ex.sampler}}
	for _, m := range ex.hostMons {
		live.add(m)
	}
	ex.live = live
	r := monitor.NewRunner(live, ex.s.Monitor.Interval.Duration, func(ss []monitor.Sample) error {
		kept := ss[:0]
		for _, x := range ss {
			if x.Start.Before(end) {
				kept = append(kept, x)
			}
		}
		ctl.samples(kept) // the controller's view of the tier's CPU (controller.go)
		return ex.st.AddSamples(id, kept)
	})
	r.Start(origin)
	return func() {
		err := r.Stop()
		ex.live = nil
		if err != nil {
			_ = ex.st.AddEvent(store.Event{RunID: id, Time: time.Now(), Kind: "monitor_error", Detail: err.Error()})
		}
	}
}

// serverPIDs lists the processes of a server Headroom runs itself.
func serverPIDs(tgt target.Target) []int {
	if sp, ok := tgt.(target.ServerProcesses); ok {
		return sp.ServerPIDs()
	}
	return nil
}

// restartMonitor rebuilds the sampler after a server restart, whose
// processes have new IDs.
func (ex *executor) restartMonitor() error {
	if ex.sampler == nil {
		return nil
	}
	s, err := newSampler(ex.s.Monitor, serverPIDs(ex.tgt))
	if err != nil {
		return err
	}
	if ex.live != nil {
		ex.live.replace(ex.sampler, s)
	}
	ex.sampler.Close()
	ex.sampler = s
	return nil
}

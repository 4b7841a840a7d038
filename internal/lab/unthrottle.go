package lab

import (
	"errors"
	"runtime"
)

// Unthrottle lifts every host's volume limits (IOPS and bandwidth) and CPU
// quota (to all of this machine's cores), as a cloud volume restored from
// a snapshot arrives with its data already on it: the lab's
// populate_unthrottled loads a campaign's data set this way. The volume
// governor stops until Rethrottle. Memory and link limits stay.
//
// This departs from a provider's behaviour: a real volume restored from a
// snapshot is loaded lazily, and its first reads of each block are slow.
func (l *Lab) Unthrottle() error {
	// The governor would rewrite the kernel limits from the budgets it
	// holds; it stops first so that no tick puts a limit back.
	l.stopGovernor()
	cores := float64(runtime.NumCPU())
	var errs []error
	for _, h := range l.State().Hosts {
		errs = append(errs, l.update(h.Name, func(x *HostState) error {
			if err := l.cg.setCPU(x.Cgroup, cores); err != nil {
				return err
			}
			// Recorded as the machine's cores, not converted: nothing is
			// measured while a host is unthrottled.
			x.Now.VCPUs, x.Now.Cores = cores, cores
			if x.Device == "" {
				return nil
			}
			prev := x.Now
			x.Now.IOPS, x.Now.MiBps = 0, 0
			if err := l.setBudget(x); err != nil {
				x.Now = prev
				return err
			}
			return nil
		}))
	}
	return errors.Join(errs...)
}

// Rethrottle puts every host's CPU quota and volume limits back as
// defined, each volume's budget split afresh (as when the lab came up,
// not from the rates of the unthrottled load), and starts the governor
// again.
func (l *Lab) Rethrottle() error {
	var errs []error
	for _, h := range l.State().Hosts {
		def := definedLimits(h.HostConfig)
		errs = append(errs, l.update(h.Name, func(x *HostState) error {
			cores := l.state.ComputeUnit.CoresFor(def.VCPUs)
			if err := l.cg.setCPU(x.Cgroup, cores); err != nil {
				return err
			}
			x.Now.VCPUs, x.Now.Cores = def.VCPUs, cores
			if x.Device == "" {
				return nil
			}
			prev := x.Now
			x.Now.IOPS, x.Now.MiBps = def.IOPS, def.MiBps
			l.gov.mu.Lock()
			delete(l.gov.budgets, x.Name)
			l.gov.mu.Unlock()
			if err := l.setBudget(x); err != nil {
				x.Now = prev
				return err
			}
			return nil
		}))
	}
	l.startGovernor()
	return errors.Join(errs...)
}

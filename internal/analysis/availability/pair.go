package availability

import (
	"slices"
)

// Fault and recovery actions of the spec's events: section
// (internal/lab/definition.go, internal/spec/failover.go).
const (
	ActKill      = "kill"
	ActStart     = "start"
	ActStop      = "stop"
	ActContinue  = "continue"
	ActLinkDown  = "link_down"
	ActLinkUp    = "link_up"
	ActPartition = "partition"
	ActHeal      = "heal"
	ActStall     = "stall_disk"
	ActResume    = "resume_disk"
	ActPromote   = "promote"
)

// recovers maps a fault to the actions that end it. A promote ends a
// kill (or stop, or a primary cut off by its link) whatever host it
// names: it makes another node the primary, so the failed one no longer
// has to come back.
var recovers = map[string][]string{
	ActKill:      {ActStart, ActPromote},
	ActStop:      {ActContinue, ActPromote},
	ActLinkDown:  {ActLinkUp, ActPromote},
	ActPartition: {ActHeal, ActPromote},
	ActStall:     {ActResume, ActPromote},
}

// hostBound says whether a recovery must name the fault's host to end it
// (heal and promote need not: heal has no host, promote names the node
// that takes over).
func hostBound(action string) bool { return action != ActHeal && action != ActPromote }

// IsFault says whether action starts a failure scenario.
func IsFault(action string) bool { _, ok := recovers[action]; return ok }

// IsRecovery says whether action can end one.
func IsRecovery(action string) bool {
	for _, rs := range recovers {
		if slices.Contains(rs, action) {
			return true
		}
	}
	return false
}

// Failure is a fault and the event that recovered it (zero Action when
// none did).
type Failure struct {
	Fault, Recovery Event
}

// Pair pairs every fault with the first later recovery of it, in time
// order: kill -> start (same host) or promote, stop -> continue (same
// host) or promote, link_down -> link_up (same host) or promote,
// stall_disk -> resume_disk (same host) or promote, partition -> heal or
// promote. A recovery ends every open fault it
// matches (a heal ends all partitions; a promote ends every open failure
// of the old primary, which is any open kill, stop, link_down,
// stall_disk or partition). Events that failed to apply are left out. It returns the
// failures in fault order, and the recoveries that ended none.
func Pair(events []Event) ([]Failure, []Event) {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return a.At.Compare(b.At) })
	var open []Failure
	var done []Failure
	var unpaired []Event
	for _, e := range evs {
		if e.Error != "" {
			continue
		}
		switch {
		case IsFault(e.Action):
			open = append(open, Failure{Fault: e})
		case IsRecovery(e.Action):
			closed := false
			open = slices.DeleteFunc(open, func(f Failure) bool {
				if !slices.Contains(recovers[f.Fault.Action], e.Action) || hostBound(e.Action) && f.Fault.Host != e.Host {
					return false
				}
				f.Recovery = e
				done = append(done, f)
				closed = true
				return true
			})
			if !closed {
				unpaired = append(unpaired, e)
			}
		}
	}
	done = append(done, open...)
	slices.SortStableFunc(done, func(a, b Failure) int { return a.Fault.At.Compare(b.Fault.At) })
	return done, unpaired
}

package agent

import (
	"fmt"
	"math"
)

// Share is one agent's part of a run's load.
//
// Open loop: each of n agents offers the level's rate divided by n, each
// from its own Poisson arrival stream. The superposition of independent
// Poisson processes is a Poisson process whose rate is the sum of theirs
// (the superposition theorem; e.g. Kingman, "Poisson Processes", §2.2), so
// the target sees the same arrival process as from one generator at the
// whole rate. The streams are independent because each agent draws from its
// own seed (AgentSeed).
//
// Closed loop: the level's clients are dealt out as evenly as possible
// (the first level mod n agents get one more).
//
// Inserts: agent i inserts key numbers from InsertStart, in a block of
// InsertSpan numbers of its own, so that no two agents insert the same key.
type Share struct {
	Index       int     `json:"index"` // 0-based
	Of          int     `json:"of"`    // number of agents
	Model       string  `json:"model"` // "open" or "closed"
	Rate        float64 `json:"rate,omitempty"`
	Clients     int     `json:"clients,omitempty"`
	MaxInFlight int     `json:"max_in_flight,omitempty"` // open: this agent's request slots
	Seed        uint64  `json:"seed"`
	InsertStart uint64  `json:"insert_start"`
	InsertSpan  uint64  `json:"insert_span"`
}

// InsertSpan is the block of insert key numbers each agent gets per run:
// far more than one agent inserts in a run (4 billion), and with 64-bit key
// numbers billions of runs fit before they wrap.
const InsertSpan = 1 << 32

// Split deals a run's load out to n agents: level is the run's rate
// (open) or clients (closed), maxInFlight the spec's request slots (the
// fleet's total: each agent gets its ceiling share), seed the run's seed,
// and nextInsert where the run's inserts start.
func Split(model string, level float64, maxInFlight int, seed, nextInsert uint64, n int) ([]Share, error) {
	if n < 1 {
		return nil, fmt.Errorf("a run needs at least one agent, got %d", n)
	}
	out := make([]Share, n)
	for i := range out {
		out[i] = Share{Index: i, Of: n, Model: model, Seed: AgentSeed(seed, i),
			InsertStart: nextInsert + uint64(i)*InsertSpan, InsertSpan: InsertSpan}
	}
	switch model {
	case "open":
		if !(level > 0) || math.IsInf(level, 0) {
			return nil, fmt.Errorf("an open loop's rate must be positive, got %v", level)
		}
		slots := (maxInFlight + n - 1) / n
		for i := range out {
			out[i].Rate = level / float64(n)
			out[i].MaxInFlight = max(slots, 1)
		}
	case "closed":
		c := int(level)
		if float64(c) != level || c < n {
			return nil, fmt.Errorf("%v clients cannot be dealt out to %d agents; give every agent at least one client (clients >= %d)", level, n, n)
		}
		for i := range out {
			out[i].Clients = c / n
			if i < c%n {
				out[i].Clients++
			}
		}
	default:
		return nil, fmt.Errorf("load model must be open or closed, got %q", model)
	}
	return out, nil
}

// NextInsert is where the inserts of the run after one split from
// nextInsert to n agents start: after every agent's block.
func NextInsert(nextInsert uint64, n int) uint64 { return nextInsert + uint64(n)*InsertSpan }

// AgentSeed derives agent i's random stream from the run's seed with the
// SplitMix64 finaliser: nearby inputs give unrelated outputs, so the
// agents' arrival and key streams are independent of each other and of the
// single-process run's (which uses seed itself).
func AgentSeed(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

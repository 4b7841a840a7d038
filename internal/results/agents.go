package results

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// AgentRun is one load agent's part of a run (load.agents; docs/fleet.md
// "Load agents"): its share, its clock against the coordinator's, whether
// it sent everything, and its own client-limit verdict. The run's
// intervals are the agents' merged; AgentIntervals has each one's own.
type AgentRun struct {
	RunID  int64
	Agent  string
	Host   string
	Index  int
	Status string // store.AgentCompleted, AgentLost, AgentBehind, AgentFailed
	LostAt time.Time
	Reason string
	// The share: open-loop rate (req/s) or closed-loop clients, its seed
	// and the first key number of its inserts.
	Rate        float64
	Clients     int
	Seed        uint64
	InsertStart uint64
	// ClockOffset is the agent's clock minus the coordinator's, within
	// ±ClockRTT/2.
	ClockOffset, ClockRTT time.Duration
	// From the agent's own result (zero when it sent none).
	Reported      bool
	Throughput    float64 // ok/s
	ClientCPU     float64 // % of one core
	ClientLimited bool
	ClientNote    string
	StartSkew     time.Duration // how late its engine started after the ordered instant
	// Region is the region stored with the agent's part (Kubernetes pods:
	// kubernetes.region); "" for agents on spec hosts, whose region is
	// their host's (AgentRegions).
	Region string
}

// agentDetail mirrors what the campaign stores in store.AgentRun.Detail.
type agentDetail struct {
	Share struct {
		Rate        float64 `json:"rate"`
		Clients     int     `json:"clients"`
		Seed        uint64  `json:"seed"`
		InsertStart uint64  `json:"insert_start"`
	} `json:"share"`
	Clock struct {
		Offset int64 `json:"offset_ns"`
		RTT    int64 `json:"rtt_ns"`
	} `json:"clock"`
	Result *struct {
		Throughput    float64 `json:"throughput"`
		ClientCPU     float64 `json:"client_cpu"`
		ClientLimited bool    `json:"client_limited"`
		Note          string  `json:"note"`
		StartSkewNs   int64   `json:"start_skew_ns"`
	} `json:"result"`
	Region string `json:"region"`
}

// AgentRuns returns the agents' parts of a run in share order (every
// run's when runID < 0); empty for a run one process drove.
func (r *Results) AgentRuns(runID int64) ([]AgentRun, error) {
	rows, err := r.st.AgentRuns(runID)
	if err != nil {
		return nil, err
	}
	out := make([]AgentRun, 0, len(rows))
	for _, a := range rows {
		var d agentDetail
		if err := json.Unmarshal(a.Detail, &d); err != nil {
			return nil, fmt.Errorf("run %d agent %s: its stored detail is not readable: %w", a.RunID, a.Agent, err)
		}
		ar := AgentRun{RunID: a.RunID, Agent: a.Agent, Host: a.Host, Index: a.Index, Status: a.Status, LostAt: a.LostAt, Reason: a.Reason,
			Rate: d.Share.Rate, Clients: d.Share.Clients, Seed: d.Share.Seed, InsertStart: d.Share.InsertStart,
			ClockOffset: time.Duration(d.Clock.Offset), ClockRTT: time.Duration(d.Clock.RTT), Region: d.Region}
		if res := d.Result; res != nil {
			ar.Reported, ar.Throughput, ar.ClientCPU = true, res.Throughput, res.ClientCPU
			ar.ClientLimited, ar.ClientNote, ar.StartSkew = res.ClientLimited, res.Note, time.Duration(res.StartSkewNs)
		}
		out = append(out, ar)
	}
	return out, nil
}

// AgentIntervals returns one agent's own intervals of a run (every
// agent's when agent is ""), by start.
func (r *Results) AgentIntervals(runID int64, agent string) ([]store.AgentInterval, error) {
	return r.st.AgentIntervals(runID, agent)
}

// EachAgentInterval streams run runID's agent intervals of phase ("" =
// every phase) in time order, in the memory of one interval
// (store.Store.EachAgentInterval): what an analysis of a long run reads.
func (r *Results) EachAgentInterval(runID int64, phase string, fn func(*store.AgentInterval) error) error {
	return r.st.EachAgentInterval(runID, phase, fn)
}

// Partial says in one sentence which agents' shares are missing from part
// of a run and from when; "" when every agent completed (or one process
// drove the run).
func (r *Results) Partial(runID int64) (string, error) {
	as, err := r.AgentRuns(runID)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, a := range as {
		if a.Status != store.AgentCompleted {
			parts = append(parts, fmt.Sprintf("agent %s on %s %s at %s (%s)", a.Agent, a.Host, a.Status, a.LostAt.Format(time.RFC3339Nano), a.Reason))
		}
	}
	return strings.Join(parts, "; "), nil
}

// LimitingAgents names the agents whose own client-limit verdict said the
// load generator was the limit in a run.
func (r *Results) LimitingAgents(runID int64) ([]string, error) {
	as, err := r.AgentRuns(runID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range as {
		if a.ClientLimited {
			out = append(out, a.Agent)
		}
	}
	return out, nil
}

package results

import "encoding/json"

// EventSSHHosts is the event the ssh provider (internal/infra/sshinfra)
// writes when it has connected: its hosts' facts, region labels included.
const EventSSHHosts = "ssh_hosts"

// HostRegions maps each host that carries a region label to its region:
// lab hosts (lab.hosts[].region) from the labs' "lab" events, ssh hosts
// (infra.hosts[].region) from the "ssh_hosts" events; hosts without one
// are absent. Reports use it to break per-host figures down per region.
func (r *Results) HostRegions() (map[string]string, error) {
	evs, err := r.st.Events(-1)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range evs {
		if e.Kind != EventLab && e.Kind != EventSSHHosts {
			continue
		}
		// Both events list their hosts with a name and a region.
		var le struct {
			Hosts []struct {
				Name   string `json:"name"`
				Region string `json:"region"`
			} `json:"hosts"`
		}
		if json.Unmarshal([]byte(e.Detail), &le) != nil {
			continue
		}
		for _, h := range le.Hosts {
			if h.Region != "" {
				out[h.Name] = h.Region
			}
		}
	}
	return out, nil
}

// AgentRegions maps each load agent of a run to its region: the region
// stored with its part of the run (Kubernetes pods, kubernetes.region),
// else its host's (HostRegions). Agents without a region are absent; so
// is every agent of a run one process drove.
func (r *Results) AgentRegions(runID int64) (map[string]string, error) {
	as, err := r.AgentRuns(runID)
	if err != nil || len(as) == 0 {
		return nil, err
	}
	hosts, err := r.HostRegions()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range as {
		reg := a.Region
		if reg == "" {
			reg = hosts[a.Host]
		}
		if reg != "" {
			out[a.Agent] = reg
		}
	}
	return out, nil
}

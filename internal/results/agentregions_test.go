package results_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/infra"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/results/resultstest"
	"github.com/headroom-dev/headroom/internal/store"
)

// Every agent of a run gets its region: a lab agent its lab host's, an
// ssh agent its ssh host's (from the facts the ssh provider records), a
// Kubernetes agent the region stored with its part of the run; agents on
// hosts without a label, or on this machine, get none.
func TestAgentRegions(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	must := resultstest.Must(t)
	agents := func(st *store.Store, parts ...store.AgentRun) int64 {
		id, err := st.StartRun(store.Run{Seq: 1, Slot: 1, Model: "open", Level: 400, Repetition: 1, Start: t0})
		must(err)
		for i, a := range parts {
			a.RunID, a.Index, a.Status = id, i, store.AgentCompleted
			if a.Detail == nil {
				a.Detail = []byte(`{"share":{"rate":100}}`)
			}
			must(st.PutAgentRun(a))
		}
		return id
	}
	check := func(name string, st *store.Store, id int64, want map[string]string) {
		t.Helper()
		r, err := results.New(st)
		must(err)
		got, err := r.AgentRegions(id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: AgentRegions = %v, %v; want %v", name, got, err, want)
		}
	}

	lab := resultstest.Create(t, "", store.Campaign{Name: "lab", CreatedAt: t0})
	must(lab.AddEvent(store.Event{Time: t0, Kind: results.EventLab,
		Detail: `{"name":"l","hosts":[{"name":"load1","type":"small","region":"eu"},{"name":"load2","type":"small","region":"us"},{"name":"load3","type":"small"}]}`}))
	id := agents(lab, store.AgentRun{Agent: "load1", Host: "load1"}, store.AgentRun{Agent: "load1-2", Host: "load1"},
		store.AgentRun{Agent: "load2", Host: "load2"}, store.AgentRun{Agent: "load3", Host: "load3"}, store.AgentRun{Agent: "local", Host: "local"})
	check("lab", lab, id, map[string]string{"load1": "eu", "load1-2": "eu", "load2": "us"})

	ssh := resultstest.Create(t, "", store.Campaign{Name: "ssh", CreatedAt: t0})
	// The detail as sshinfra.Provider.Describe gives it.
	facts, err := json.Marshal(map[string]any{"hosts": []infra.Facts{
		{Provider: "ssh", Name: "fra1", Address: "10.0.0.5", Region: "eu-central", VCPUs: 2},
		{Provider: "ssh", Name: "iad1", Address: "10.1.0.5", Region: "us-east", VCPUs: 2},
		{Provider: "ssh", Name: "db1", Address: "10.0.0.6", VCPUs: 4},
	}})
	must(err)
	must(ssh.AddEvent(store.Event{Time: t0, Kind: results.EventSSHHosts, Detail: string(facts)}))
	id = agents(ssh, store.AgentRun{Agent: "fra1", Host: "fra1"}, store.AgentRun{Agent: "iad1", Host: "iad1"}, store.AgentRun{Agent: "db1", Host: "db1"})
	check("ssh", ssh, id, map[string]string{"fra1": "eu-central", "iad1": "us-east"})
	r, err := results.New(ssh)
	must(err)
	hr, err := r.HostRegions()
	if want := map[string]string{"fra1": "eu-central", "iad1": "us-east"}; err != nil || !reflect.DeepEqual(hr, want) {
		t.Errorf("ssh HostRegions = %v, %v; want %v", hr, err, want)
	}

	k8s := resultstest.Create(t, "", store.Campaign{Name: "k8s", CreatedAt: t0})
	id = agents(k8s, store.AgentRun{Agent: "pod-0", Host: "k8s:default/headroom-agents-abc-0 on node1", Detail: []byte(`{"share":{"rate":100},"region":"eu-west"}`)},
		store.AgentRun{Agent: "pod-1", Host: "k8s:default/headroom-agents-abc-1 on node2", Detail: []byte(`{"share":{"rate":100},"region":"eu-west"}`)})
	check("kubernetes", k8s, id, map[string]string{"pod-0": "eu-west", "pod-1": "eu-west"})
	as, err := results.New(k8s)
	must(err)
	ars, err := as.AgentRuns(id)
	if err != nil || len(ars) != 2 || ars[0].Region != "eu-west" {
		t.Errorf("kubernetes agent runs: %+v, %v", ars, err)
	}
	// A run one process drove has no agents, so no regions.
	id = agents(k8s)
	check("no agents", k8s, id, nil)
}

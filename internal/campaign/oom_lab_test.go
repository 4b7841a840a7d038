package campaign

import (
	"context"
	"strings"
	"testing"

	"github.com/headroom-dev/headroom/internal/infra/labinfra/labtest"
	_ "github.com/headroom-dev/headroom/internal/target/mysql"
)

// A managed server that its lab host's memory limit kills while it starts
// is named as killed by that limit (the cgroup's OOM count), with
// memory_mib as the fix, instead of a bare "signal: killed"; and the
// campaign, which measured nothing, gives no results to summarise.
func TestServerKilledByTheHostsMemoryLimitSaysSo(t *testing.T) {
	labtest.NeedServer(t, "mariadbd", "mariadb-server")
	dir := labtest.SearchableDir(t)
	s := parse(t, dir, `
name: lab-oom
lab:
  name: t-camp-oom
  hosts:
    - {name: db1, type: small, memory_mib: 24}
target: {type: mysql, managed: {host: db1, settings: {innodb_buffer_pool_size: 256M}}}
workload: {ycsb: c, record_count: 100}
load: {model: closed, clients: [1]}
phases: {warmup: 0s, measure: 1s}
output: out
`)
	out, err := Start(context.Background(), s, Options{})
	if err == nil {
		t.Fatal("mariadb started in a 24 MiB host with a 256 MiB buffer pool")
	}
	for _, want := range []string{"killed by host db1's memory limit (24 MiB", "memory_mib", "server.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q lacks %q", err, want)
		}
	}
	if out.StorePath != "" {
		t.Fatalf("a campaign that measured nothing left a store to summarise: %s", out.StorePath)
	}
}

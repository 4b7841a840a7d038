// Command cqlviews prints what a Cassandra 5 node measures itself for the
// two tables bench/compare-latte.sh drives (keyspaces latte and headroom):
// the count and the decaying p50 and p99 of its coordinator and local
// read and write latencies, from the system_views tables. The script runs
// it after every tool's run with NODE_VIEW=1 (docs/performance.md (g),
// "The node's own view at N = 64").
//
//	go run ./bench/cqlviews HOST:PORT
package main

import (
	"fmt"
	"os"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cqlviews HOST:PORT")
		os.Exit(2)
	}
	c := gocql.NewCluster(os.Args[1])
	c.ProtoVersion = 4
	s, err := c.CreateSession()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cqlviews: connecting to %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	defer s.Close()
	for _, view := range []string{"coordinator_read_latency", "coordinator_write_latency", "local_read_latency", "local_write_latency"} {
		it := s.Query("SELECT keyspace_name, count, p50th_ms, p99th_ms FROM system_views." + view).Iter()
		var ks string
		var n int64
		var p50, p99 float64
		var rows []string
		for it.Scan(&ks, &n, &p50, &p99) {
			if ks == "latte" || ks == "headroom" {
				rows = append(rows, fmt.Sprintf("%s count %d p50 %.3f ms p99 %.3f ms", ks, n, p50, p99))
			}
		}
		if err := it.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "cqlviews: system_views.%s: %v\n", view, err)
			os.Exit(1)
		}
		fmt.Printf("  %s: %s\n", view, strings.Join(rows, "; "))
	}
}

package cassandra

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
)

// BenchmarkOps is one client's requests back to back on the shared
// single node, one sub-benchmark per YCSB operation (ycsbtest.Bench:
// 1000 records of 10 fields of 100 bytes). The time includes the round
// trip to the node on loopback; the allocations are the client's and the
// driver's (docs/performance.md).
func BenchmarkOps(b *testing.B) {
	ycsbtest.Bench(b, sharedNode(b))
}

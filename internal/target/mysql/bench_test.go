package mysql

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
)

// BenchmarkYCSB measures one client per YCSB operation against the
// package's managed MariaDB server, with the default options (statements
// sent as text, arguments interpolated; docs/performance.md):
//
//	go test -run '^$' -bench YCSB -benchtime 5000x ./internal/target/mysql/
func BenchmarkYCSB(b *testing.B) {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	ycsbtest.Bench(b, shared.Target)
}

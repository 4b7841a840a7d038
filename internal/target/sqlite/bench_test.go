package sqlite

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/target/sqlycsb/ycsbtest"
)

// BenchmarkYCSB measures one client per YCSB operation on a database file
// with the default options (docs/performance.md):
//
//	go test -run '^$' -bench YCSB -benchtime 20000x ./internal/target/sqlite/
func BenchmarkYCSB(b *testing.B) {
	tg, err := Open(*defaultOptions(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	ycsbtest.Bench(b, tg)
}

package disk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/headroom-dev/headroom/internal/workload"
)

// directDir returns a temporary directory on a filesystem that supports
// O_DIRECT: t.TempDir() unless it is on tmpfs (or similar), else a
// directory under /var/tmp, removed when the test ends.
func directDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if supportsDirect(d) {
		return d
	}
	d, err := os.MkdirTemp("/var/tmp", "headroom-disk-test-")
	if err != nil {
		t.Skipf("no directory with O_DIRECT support: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if !supportsDirect(d) {
		t.Skip("neither the test's temporary directory nor /var/tmp supports O_DIRECT")
	}
	return d
}

func supportsDirect(dir string) bool {
	if !directSupported {
		return false
	}
	p := filepath.Join(dir, "probe")
	defer os.Remove(p)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|directFlag, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.WriteAt(alignedBuf(alignment), 0)
	return !errors.Is(err, syscall.EINVAL) && err == nil
}

// wconfig is a workload with one record per block and the given mix.
func wconfig(blocks uint64, mix map[workload.OpType]float64) workload.Config {
	c := workload.Config{RecordCount: int64(blocks), FieldCount: 1, FieldLength: 1,
		RequestDistribution: workload.DistUniform, MaxScanLength: 8}
	for t, w := range mix {
		c.Mix[t] = w
	}
	return c
}

// populate runs the campaign's populate phase: Populate(i) for every record,
// LoadBatch in batches.
func populate(t testing.TB, tgt *Target, w workload.Config) {
	t.Helper()
	ctx := context.Background()
	gen, err := workload.New(w, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const batch = 1000
	ops := make([]*workload.Op, batch)
	for i := range ops {
		ops[i] = gen.NewOp()
	}
	for i := int64(0); i < w.RecordCount; i += batch {
		k := int(min(batch, w.RecordCount-i))
		for j := 0; j < k; j++ {
			gen.Populate(i+int64(j), ops[j])
		}
		if err := c.(*client).LoadBatch(ctx, ops[:k]); err != nil {
			t.Fatal(err)
		}
	}
}

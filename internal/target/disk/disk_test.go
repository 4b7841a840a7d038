package disk

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func TestRegistered(t *testing.T) {
	f, ok := registry.Lookup("disk")
	if !ok {
		t.Fatal("disk target is not registered")
	}
	if err := f.Validate(f.NewOptions()); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"4096": 4096, "512B": 512, "4KiB": 4096, "4k": 4096,
		"256MiB": 256 << 20, "1GiB": 1 << 30, "1 gib": 1 << 30, "2T": 2 << 40} {
		got, err := parseSize("size", s)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "KiB", "4KB", "1.5GiB", "-1MiB", "0", "99999999999TiB"} {
		if _, err := parseSize("size", s); err == nil || !strings.HasPrefix(err.Error(), "size: ") {
			t.Errorf("parseSize(%q): error %v, want one naming size", s, err)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		mod  func(*Options)
		want string // prefix of the error; "" = valid
	}{
		{func(*Options) {}, ""},
		{func(o *Options) { o.Size, o.BlockSize = "1GiB", "1MiB" }, ""},
		{func(o *Options) { o.BlockSize = "512" }, ""},
		{func(o *Options) { o.BlockSize = "16MiB"; o.Size = "32MiB" }, ""},
		{func(o *Options) { o.Path = " " }, "path: "},
		{func(o *Options) { o.Size = "lots" }, "size: "},
		{func(o *Options) { o.Size = "1000" }, "size: "},             // smaller than a block
		{func(o *Options) { o.Size = "4097KiB" }, "size: "},          // not a whole number of 4 KiB blocks
		{func(o *Options) { o.BlockSize = "1000" }, "block_size: "},  // not a 512 multiple
		{func(o *Options) { o.BlockSize = "32MiB" }, "block_size: "}, // above 16 MiB
		{func(o *Options) { o.BlockSize = "4 KB" }, "block_size: "},  // decimal unit
	}
	for i, c := range cases {
		o := defaultOptions()
		c.mod(o)
		err := validate(o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %d: unexpected error %v", i, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("case %d: error %v, want prefix %q", i, err, c.want)
		case err != nil && strings.Count(err.Error(), ". ") > 0:
			t.Errorf("case %d: error %q is more than one sentence", i, err)
		}
	}
}

// small opens a 16-block file of 4 KiB blocks in a directory that supports
// O_DIRECT.
func small(t *testing.T, mod func(*Options)) *Target {
	t.Helper()
	o := defaultOptions()
	o.Size = "64KiB"
	if mod != nil {
		mod(o)
	}
	tgt, err := Open(*o, directDir(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func TestRecordCountMismatch(t *testing.T) {
	tgt := small(t, nil)
	err := tgt.Prepare(context.Background(), wconfig(1000, map[workload.OpType]float64{workload.Read: 1}), true)
	if err == nil || !strings.Contains(err.Error(), "workload.record_count must be 16 (size / block_size") {
		t.Fatalf("Prepare: %v; want a record_count error naming 16", err)
	}
}

func TestOperations(t *testing.T) {
	ctx := context.Background()
	tgt := small(t, nil)
	w := wconfig(16, map[workload.OpType]float64{workload.Read: 1, workload.Scan: 1})
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	populate(t, tgt, w)
	data := mustRead(t, tgt.Path())
	if len(data) != 64<<10 {
		t.Fatalf("file is %d bytes, want %d", len(data), 64<<10)
	}
	for b := 0; b < 16; b++ {
		if bytes.Count(data[b*4096:(b+1)*4096], []byte{0}) > 512 {
			t.Fatalf("block %d was not written by populate", b)
		}
	}

	cl, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := cl.(*client)
	block := func(b int) []byte { return mustRead(t, tgt.Path())[b*4096 : (b+1)*4096] }

	// Writes land at (KeyNum mod blocks) * block_size; KeyNum 21 is block 5.
	for _, typ := range []workload.OpType{workload.Update, workload.Insert, workload.ReadModifyWrite} {
		for _, k := range []uint64{5, 21, 15} {
			if err := c.Do(ctx, &workload.Op{Type: typ, KeyNum: k}); err != nil {
				t.Fatalf("%s %d: %v", typ, k, err)
			}
			if !bytes.Equal(block(int(k%16)), c.wbuf) {
				t.Fatalf("%s of key %d did not write block %d", typ, k, k%16)
			}
		}
	}
	// Reads fetch the block at the offset.
	known := bytes.Repeat([]byte("headroom"), 512)
	writePlain(t, tgt.Path(), 3*4096, known)
	if err := c.Do(ctx, &workload.Op{Type: workload.Read, KeyNum: 19}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.rbuf[:4096], known) {
		t.Fatal("read of key 19 did not return block 3")
	}
	// Scans read ScanLength blocks, wrapping to block 0; the last read
	// starts at block 0.
	if len(c.rbuf) != 8*4096 {
		t.Fatalf("scan buffer holds %d bytes, want 8 blocks (max_scan_length)", len(c.rbuf))
	}
	writePlain(t, tgt.Path(), 0, known)
	if err := c.Do(ctx, &workload.Op{Type: workload.Scan, KeyNum: 14, ScanLength: 5}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.rbuf[:4096], known) {
		t.Fatal("scan from block 14 did not wrap to block 0")
	}
	if err := c.Do(ctx, &workload.Op{Type: workload.Scan, KeyNum: 0, ScanLength: 40}); err != nil {
		t.Fatal(err)
	}
	// Writes are random data, distinct per write.
	before := append([]byte(nil), block(7)...)
	if err := c.Do(ctx, &workload.Op{Type: workload.Update, KeyNum: 7}); err != nil {
		t.Fatal(err)
	}
	after := block(7)
	if bytes.Equal(before, after) || bytes.Count(after, []byte{0}) > 512 {
		t.Fatal("an update did not write fresh random data")
	}
}

func TestNoAllocations(t *testing.T) {
	ctx := context.Background()
	tgt := small(t, nil)
	w := wconfig(16, map[workload.OpType]float64{workload.Read: 1, workload.Scan: 1})
	if err := tgt.Prepare(ctx, w, true); err != nil {
		t.Fatal(err)
	}
	cl, err := tgt.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	op := &workload.Op{}
	for _, typ := range []workload.OpType{workload.Read, workload.Update, workload.ReadModifyWrite, workload.Scan} {
		op.Type, op.ScanLength = typ, 4
		if a := testing.AllocsPerRun(20, func() { op.KeyNum++; _ = cl.Do(ctx, op) }); a != 0 {
			t.Errorf("%s allocates %.1f times per Do", typ, a)
		}
	}
}

func TestPrepareNotFreshFillsMissingFile(t *testing.T) {
	ctx := context.Background()
	tgt := small(t, nil)
	w := wconfig(16, map[workload.OpType]float64{workload.Read: 1})
	// No file yet and no populate phase (resume after keep: false).
	if err := tgt.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	data := mustRead(t, tgt.Path())
	if len(data) != 64<<10 || bytes.Count(data, []byte{0}) > len(data)/16 {
		t.Fatalf("Prepare(fresh=false) left %d bytes, %d of them zero; want the whole file written", len(data), bytes.Count(data, []byte{0}))
	}
	// A complete file is kept as it is.
	if err := tgt.Prepare(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, tgt.Path()), data) {
		t.Fatal("Prepare(fresh=false) rewrote a complete file")
	}
}

func TestCloseRemovesUnlessKeep(t *testing.T) {
	ctx := context.Background()
	w := wconfig(16, map[workload.OpType]float64{workload.Read: 1})
	for _, keep := range []bool{false, true} {
		tgt := small(t, func(o *Options) { o.Keep = keep })
		if err := tgt.Prepare(ctx, w, true); err != nil {
			t.Fatal(err)
		}
		if err := tgt.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(tgt.Path())
		if exists := err == nil; exists != keep {
			t.Errorf("keep: %v: file exists after Close = %v", keep, exists)
		}
	}
}

func TestRefusesNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	o := defaultOptions()
	o.Path, o.Size = dir, "64KiB"
	tgt, err := Open(*o, "")
	if err != nil {
		t.Fatal(err)
	}
	err = tgt.Prepare(context.Background(), wconfig(16, map[workload.OpType]float64{workload.Read: 1}), true)
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Prepare on a directory: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal("the directory was touched")
	}
}

func TestDirectUnsupported(t *testing.T) {
	dir := "/dev/shm"
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || supportsDirect(dir) || !directSupported {
		t.Skip("no filesystem at /dev/shm that refuses O_DIRECT (tmpfs accepts it since Linux 6.6)")
	}
	d, err := os.MkdirTemp(dir, "headroom-disk-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(d)
	o := defaultOptions()
	o.Size = "64KiB"
	tgt, err := Open(*o, d)
	if err != nil {
		t.Fatal(err)
	}
	err = tgt.Prepare(context.Background(), wconfig(16, map[workload.OpType]float64{workload.Read: 1}), true)
	if err == nil || !strings.Contains(err.Error(), "set direct: false") {
		t.Fatalf("Prepare on tmpfs: %v; want the direct I/O hint", err)
	}
	tgt.Close()
}

func TestErrorKinds(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{syscall.ENOSPC: "disk_full", syscall.EDQUOT: "disk_full", syscall.EIO: "io_error"} {
		err := classify(&os.PathError{Op: "write", Path: "x", Err: errno})
		var k target.Kinder
		if !errors.As(err, &k) || k.Kind() != want {
			t.Errorf("%v: kind %v, want %s", errno, err, want)
		}
	}
	if _, ok := classify(syscall.EBADF).(target.Kinder); ok {
		t.Error("EBADF should be left to the engine")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writePlain(t *testing.T, p string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

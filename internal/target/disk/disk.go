// Package disk is a block-I/O micro-benchmark target: each operation reads
// or writes one block of a pre-written test file at an offset chosen by the
// workload's key distribution, synchronously and (by default) with O_DIRECT.
// It measures a volume's empirical expected service level (seed-digest §4):
// one closed-loop client with a uniform distribution is the single-threaded,
// synchronous, random-offset benchmark, and its ops/s agree with fio's psync
// engine on the same file and settings (disk_test.go).
//
// Blocks are records: the workload's record_count must equal size /
// block_size, populate writes every block, and op.KeyNum (mod the number of
// blocks) picks the block.
package disk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
	"github.com/headroom-dev/headroom/internal/workload"
)

func init() {
	registry.Register(registry.Factory{
		Name:    "disk",
		Summary: "block-I/O benchmark on a pre-written file (direct, synchronous, random offsets) for volume service levels",
		// The I/O system calls run in the Headroom process, so their CPU
		// time (much of it kernel time) counts as the client's.
		InProcess:  true,
		NewOptions: func() any { return defaultOptions() },
		Validate:   validate,
		Open:       func(o any, env registry.Env) (target.Target, error) { return Open(*o.(*Options), env.Dir) },
	})
}

// loadChunk is the largest single write of population and the largest
// single read of a scan.
const loadChunk = 1 << 20

// Target is a test file.
type Target struct {
	opts    Options
	path    string
	size    int64
	block   int64
	nblocks uint64
	flags   int

	mu         sync.Mutex
	prepared   bool  // Prepare ran: Close removes the file unless Keep
	scanBlocks int64 // blocks per scan read; 1 until Prepare sees scans
	clients    uint64
}

// Open checks opts and resolves the file's path against dir (relative
// paths). It does not touch the file; Prepare does.
func Open(opts Options, dir string) (*Target, error) {
	if err := validate(&opts); err != nil {
		return nil, fmt.Errorf("disk target: %w", err)
	}
	size, block, _ := opts.sizes()
	path := opts.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	flags := os.O_RDWR
	if opts.Direct {
		flags |= directFlag
	}
	if opts.Sync {
		flags |= dsyncFlag
	}
	return &Target{opts: opts, path: path, size: size, block: block,
		nblocks: uint64(size / block), flags: flags, scanBlocks: 1}, nil
}

// Path is the test file.
func (t *Target) Path() string { return t.path }

// Blocks is the number of blocks in the file (size / block_size), which the
// workload's record_count must equal.
func (t *Target) Blocks() uint64 { return t.nblocks }

// Prepare checks that w has one record per block, then creates the file:
// when fresh it is truncated and preallocated to size, and the populate phase
// writes every block (LoadBatch). When not fresh, blocks missing from a file
// shorter than size (a new or removed file, for example when a campaign is
// resumed after keep: false removed it) are written here, so that reads
// never hit unwritten extents, which storage answers without reading.
func (t *Target) Prepare(ctx context.Context, w workload.Config, fresh bool) error {
	if w.RecordCount != int64(t.nblocks) {
		return fmt.Errorf("disk target: workload.record_count must be %d (size / block_size = %s / %s) for the disk target, got %d",
			t.nblocks, t.opts.Size, t.opts.BlockSize, w.RecordCount)
	}
	if fi, err := os.Stat(t.path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("disk target: path: %s is not a regular file; the disk target only benchmarks through a file it may overwrite", t.path)
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return fmt.Errorf("disk target: %w", err)
	}
	t.mu.Lock()
	t.prepared = true
	if w.Mix[workload.Scan] > 0 && w.MaxScanLength > 1 {
		t.scanBlocks = min(int64(w.MaxScanLength), max(1, loadChunk/t.block))
	}
	t.mu.Unlock()

	f, err := t.openFile(os.O_CREATE)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("disk target: %w", err)
	}
	have := fi.Size()
	if fresh {
		have = 0
		if err := f.Truncate(0); err != nil {
			return fmt.Errorf("disk target: emptying %s: %w", t.path, err)
		}
	}
	if have < t.size {
		if err := preallocate(f, t.size); err != nil {
			return fmt.Errorf("disk target: allocating %s for %s: %w", t.opts.Size, t.path, classify(err))
		}
	}
	c, err := t.newClient(f)
	if err != nil {
		return err
	}
	if err := c.readBlocks(0, 1, c.rbuf); err != nil {
		return err // probes that the filesystem accepts direct reads
	}
	if !fresh && have < t.size {
		first := uint64(have / t.block)
		if err := c.writeBlocks(ctx, first, t.nblocks-first); err != nil {
			return err
		}
	}
	return nil
}

// openFile opens the test file with the target's flags plus extra, and
// explains the usual failure of O_DIRECT.
func (t *Target) openFile(extra int) (*os.File, error) {
	f, err := os.OpenFile(t.path, t.flags|extra, 0o644)
	if err != nil {
		if t.opts.Direct && errors.Is(err, syscall.EINVAL) {
			return nil, t.directErr()
		}
		return nil, fmt.Errorf("disk target: opening %s: %w", t.path, err)
	}
	return f, nil
}

// directErr explains EINVAL under O_DIRECT: at open time the filesystem
// refuses direct I/O; on a read or write the block size or offset is not a
// multiple of the device's logical sector size (4 KiB on 4Kn devices).
func (t *Target) directErr() error {
	if t.block%4096 != 0 {
		return fmt.Errorf("disk target: direct: direct I/O on %s was refused; block_size %d B may not be a multiple of the device's sector size (use a multiple of 4KiB), or the filesystem does not support O_DIRECT (set direct: false)", t.path, t.block)
	}
	return fmt.Errorf("disk target: direct: the filesystem holding %s does not support direct I/O (O_DIRECT; tmpfs does not, for example); set direct: false or choose a path on a disk-backed filesystem", t.path)
}

// NewClient opens the file with its own descriptor and buffers.
func (t *Target) NewClient(context.Context) (target.Client, error) {
	f, err := t.openFile(0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("disk target: %s does not exist; the target must be prepared first: %w", t.path, err)
		}
		return nil, err
	}
	return t.newClient(f)
}

// Close removes the file unless keep is set or Prepare never ran.
func (t *Target) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.prepared || t.opts.Keep {
		return nil
	}
	t.prepared = false
	if err := os.Remove(t.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("disk target: removing %s: %w", t.path, err)
	}
	return nil
}

// classify names the kind of an I/O error for the per-interval error counts.
func classify(err error) error {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return &target.KindError{K: "disk_full", Err: err}
	case errors.Is(err, syscall.EIO):
		return &target.KindError{K: "io_error", Err: err}
	}
	return err
}

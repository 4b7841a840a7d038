package disk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// client owns one file descriptor and aligned buffers: rbuf receives reads
// (one block, or scanBlocks blocks), wbuf holds random data that every write
// sends after stamping it. Do allocates nothing.
type client struct {
	t    *Target
	f    *os.File
	rbuf []byte
	wbuf []byte
	lbuf []byte // population writes, up to loadChunk; allocated on first use
	seq  uint64
}

func (t *Target) newClient(f *os.File) (*client, error) {
	t.mu.Lock()
	t.clients++
	id, scan := t.clients, t.scanBlocks
	t.mu.Unlock()
	c := &client{t: t, f: f, rbuf: alignedBuf(int(scan * t.block)), wbuf: alignedBuf(int(t.block)), seq: id << 48}
	fillRandom(c.wbuf, id)
	return c, nil
}

// Do implements target.Client.
func (c *client) Do(_ context.Context, op *workload.Op) error {
	n := c.t.nblocks
	b := op.KeyNum % n
	switch op.Type {
	case workload.Read:
		return c.readBlocks(b, 1, c.rbuf)
	case workload.Update, workload.Insert:
		return c.write(b)
	case workload.ReadModifyWrite:
		if err := c.readBlocks(b, 1, c.rbuf); err != nil {
			return err
		}
		return c.write(b)
	case workload.Scan:
		left := uint64(max(op.ScanLength, 1))
		per := uint64(len(c.rbuf)) / uint64(c.t.block)
		for left > 0 {
			k := min(left, per, n-b) // wraps to block 0 at the end of the file
			if err := c.readBlocks(b, k, c.rbuf); err != nil {
				return err
			}
			left -= k
			b = (b + k) % n
		}
		return nil
	}
	return fmt.Errorf("disk target: unsupported operation %s", op.Type)
}

// readBlocks reads k blocks from block b into buf.
func (c *client) readBlocks(b, k uint64, buf []byte) error {
	off := int64(b) * c.t.block
	if _, err := c.f.ReadAt(buf[:int64(k)*c.t.block], off); err != nil {
		return c.ioErr("reading", off, err)
	}
	return nil
}

func (c *client) write(b uint64) error {
	c.seq++
	stamp(c.wbuf, c.seq)
	off := int64(b) * c.t.block
	if _, err := c.f.WriteAt(c.wbuf, off); err != nil {
		return c.ioErr("writing", off, err)
	}
	return nil
}

func (c *client) ioErr(what string, off int64, err error) error {
	if errors.Is(err, io.EOF) {
		return &target.KindError{K: "io_error", Err: fmt.Errorf("%s %s at offset %d: the file is shorter than size %s", what, c.t.path, off, c.t.opts.Size)}
	}
	if c.t.opts.Direct && errors.Is(err, syscall.EINVAL) {
		return c.t.directErr()
	}
	return classify(fmt.Errorf("%s %s at offset %d: %w", what, c.t.path, off, err))
}

// writeBlocks writes blocks first .. first+count-1 (which must not pass the
// end of the file) with sequential writes of up to loadChunk bytes.
func (c *client) writeBlocks(ctx context.Context, first, count uint64) error {
	bs := uint64(c.t.block)
	if c.lbuf == nil {
		c.lbuf = alignedBuf(int(max(1, loadChunk/bs) * bs))
		fillRandom(c.lbuf, c.seq^0xa5a5)
	}
	per := uint64(len(c.lbuf)) / bs
	for count > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(count, per)
		buf := c.lbuf[:k*bs]
		c.seq++
		stamp(buf, c.seq)
		off := int64(first * bs)
		if _, err := c.f.WriteAt(buf, off); err != nil {
			return c.ioErr("writing", off, err)
		}
		first += k
		count -= k
	}
	return nil
}

// LoadBatch implements target.Loader: it writes the block of each op,
// merging runs of consecutive blocks into large sequential writes.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	n := c.t.nblocks
	for i := 0; i < len(ops); {
		first := ops[i].KeyNum % n
		j := i + 1
		for j < len(ops) && ops[j].KeyNum%n == first+uint64(j-i) {
			j++
		}
		if err := c.writeBlocks(ctx, first, uint64(j-i)); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Close implements target.Client.
func (c *client) Close() error { return c.f.Close() }

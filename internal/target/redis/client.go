package redistarget

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// The client keeps one go-redis command object per command shape and
// reuses it for every request: its argument list holds pointers to the
// client's own key and value holders (argBytes, *string, *float64), which
// are pointed at the op's buffers before each call. Nothing is boxed or
// built per request; what go-redis allocates inside Process remains.
//
// Reads use RawWriteToCmd, which streams the reply to a replySink instead
// of decoding it into strings and maps; the sink keeps only the first bytes
// of the reply's header lines, which is enough to tell a value from a
// missing key or an error reply.

// argBytes is a command argument whose bytes change between calls. go-redis
// writes an encoding.BinaryMarshaler's bytes as a bulk string, and a
// pointer in an interface costs no allocation.
type argBytes struct{ b []byte }

func (a *argBytes) MarshalBinary() ([]byte, error) { return a.b, nil }

// replySink receives one raw RESP reply.
type replySink struct {
	head    [128]byte // the start of the reply's header lines
	n       int
	scratch []byte // bulk data is read into it and dropped; shared by a client's sinks
}

func (s *replySink) reset() { s.n = 0 }

// Write takes header lines (and, from some go-redis paths, data).
func (s *replySink) Write(p []byte) (int, error) {
	s.n += copy(s.head[s.n:], p)
	return len(p), nil
}

// ReadFrom takes bulk data; implementing it keeps io.Copy from allocating
// a buffer per call.
func (s *replySink) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		n, err := r.Read(s.scratch)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// line returns the i-th header line (0 or 1) without its CRLF, as far as
// the sink kept it.
func (s *replySink) line(i int) []byte {
	b := s.head[:s.n]
	for ; i > 0; i-- {
		j := indexCRLF(b)
		if j < 0 {
			return nil
		}
		b = b[j+2:]
	}
	if j := indexCRLF(b); j >= 0 {
		b = b[:j]
	}
	return b
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

// isNil reports a RESP null: "$-1", "*-1" (RESP2) or "_" (RESP3).
func isNil(line []byte) bool {
	return len(line) == 1 && line[0] == '_' || len(line) == 3 && (line[0] == '$' || line[0] == '*') && line[1] == '-' && line[2] == '1'
}

// isEmpty reports an empty array or map ("*0", "%0").
func isEmpty(line []byte) bool {
	return len(line) == 2 && (line[0] == '*' || line[0] == '%') && line[1] == '0'
}

// result interprets the sink's reply: an error reply becomes an error, and
// a null or empty reply (first line, or for HMGET the first element) is
// target.ErrNotFound.
func (s *replySink) result(elementNil bool) error {
	first := s.line(0)
	if len(first) == 0 {
		return fmt.Errorf("redis target: empty reply")
	}
	if first[0] == '-' {
		return replyError(first[1:])
	}
	if isNil(first) || isEmpty(first) {
		return target.ErrNotFound
	}
	if elementNil && isNil(s.line(1)) {
		return target.ErrNotFound
	}
	return nil
}

// rawCmd is a reusable read command with its own reply sink.
type rawCmd struct {
	cmd  *redis.RawWriteToCmd
	sink *replySink
}

func newRawCmd(scratch []byte, args ...any) rawCmd {
	s := &replySink{scratch: scratch}
	return rawCmd{cmd: redis.NewRawWriteToCmd(context.Background(), s, args...), sink: s}
}

type client struct {
	t    *Target
	rdb  conn // writes, and reads unless they go to replicas (reader)
	pipe redis.Pipeliner
	rr   uint64 // the last replica this client read from
	// primaryOnly sends reads to the primary whatever read_from says
	// (StrongClient).
	primaryOnly bool

	// Argument holders the reusable commands point at.
	key       argBytes
	keyBuf    []byte
	fieldName string     // name of the one field a command covers
	one       argBytes   // that field's value
	vals      []argBytes // every field's value (hash mode)
	record    argBytes   // the whole record (string mode)
	recordBuf []byte
	score     float64 // the key's index score
	offset    int64   // SETRANGE offset (string mode)
	min       float64 // scan start score
	count     int64   // scan length

	// Hash mode.
	hgetall, hmget rawCmd
	hsetOne        *redis.IntCmd
	hsetAll        *redis.IntCmd
	zadd           *redis.IntCmd
	zrange         *redis.StringSliceCmd
	scan           []scanSlot
	scanCmds       []redis.Cmder

	// String mode.
	get      rawCmd
	set      *redis.StatusCmd
	setrange *redis.IntCmd

	load []loadSlot

	scratch []byte // where the sinks drop bulk data
}

// scanSlot reads one record of a scan.
type scanSlot struct {
	key           string
	all, oneField rawCmd
}

// loadSlot holds the reusable commands of one record of a LoadBatch.
type loadSlot struct {
	key       argBytes
	keyBuf    []byte
	vals      []argBytes
	record    argBytes
	recordBuf []byte
	score     float64
	hset      *redis.IntCmd
	zadd      *redis.IntCmd
	set       *redis.StatusCmd
}

func newClient(t *Target) *client {
	c := &client{t: t, rdb: t.rdb, pipe: t.rdb.Pipeline(), scratch: make([]byte, 4096)}
	ctx := context.Background()
	if t.opts.Mode == modeString {
		c.get = newRawCmd(c.scratch, "GET", &c.key)
		c.set = redis.NewStatusCmd(ctx, "SET", &c.key, &c.record)
		c.setrange = redis.NewIntCmd(ctx, "SETRANGE", &c.key, &c.offset, &c.one)
		return c
	}
	c.hgetall = newRawCmd(c.scratch, "HGETALL", &c.key)
	c.hmget = newRawCmd(c.scratch, "HMGET", &c.key, &c.fieldName)
	c.hsetOne = redis.NewIntCmd(ctx, "HSET", &c.key, &c.fieldName, &c.one)
	c.vals = make([]argBytes, len(t.fields))
	c.hsetAll = redis.NewIntCmd(ctx, hsetArgs(t.fields, &c.key, c.vals)...)
	c.zadd = redis.NewIntCmd(ctx, "ZADD", t.index, &c.score, &c.key)
	c.zrange = redis.NewStringSliceCmd(ctx, "ZRANGEBYSCORE", t.index, &c.min, "+inf", "LIMIT", 0, &c.count)
	return c
}

// hsetArgs is HSET key field0 value0 field1 value1 ...
func hsetArgs(fields []string, key *argBytes, vals []argBytes) []any {
	args := make([]any, 0, 2+2*len(fields))
	args = append(args, "HSET", key)
	for i, f := range fields {
		args = append(args, f, &vals[i])
	}
	return args
}

func (c *client) Close() error { return nil }

// setKey points the key argument at the op's key, after key_prefix.
func (c *client) setKey(k []byte) {
	if len(c.t.prefix) == 0 {
		c.key.b = k
		return
	}
	c.keyBuf = append(append(c.keyBuf[:0], c.t.prefix...), k...)
	c.key.b = c.keyBuf
}

// Do implements target.Client.
func (c *client) Do(ctx context.Context, op *workload.Op) error {
	c.setKey(op.Key)
	var err error
	if c.t.opts.Mode == modeString {
		err = c.doString(ctx, op)
	} else {
		err = c.doHash(ctx, op)
	}
	if err == target.ErrNotFound {
		return err
	}
	return classify(err)
}

func (c *client) doHash(ctx context.Context, op *workload.Op) error {
	switch op.Type {
	case workload.Read:
		return c.readHash(ctx, op.Field)
	case workload.Update:
		return c.writeHash(ctx, op)
	case workload.Insert:
		return c.insertHash(ctx, op)
	case workload.Scan:
		return c.scanHash(ctx, op)
	case workload.ReadModifyWrite:
		// Not atomic, like YCSB's binding: another client may write the
		// record between the read and the write.
		if err := c.readHash(ctx, op.Field); err != nil {
			return err
		}
		return c.writeHash(ctx, op)
	}
	return fmt.Errorf("redis target: unsupported operation %v", op.Type)
}

// readHash is HGETALL key, or HMGET key fieldN for one field.
func (c *client) readHash(ctx context.Context, field int) error {
	rc := c.hgetall
	if field >= 0 {
		c.fieldName = c.t.fields[field]
		rc = c.hmget
	}
	rd := c.reader()
	if c.t.cluster {
		return c.readFresh(ctx, rd, rc, field >= 0)
	}
	rc.sink.reset()
	if err := rd.Process(ctx, rc.cmd); err != nil {
		return err
	}
	return rc.sink.result(field >= 0)
}

// writeHash is HSET of the op's fields. Like YCSB's binding it creates a
// missing record rather than reporting it.
func (c *client) writeHash(ctx context.Context, op *workload.Op) error {
	if op.Field >= 0 {
		c.fieldName = c.t.fields[op.Field]
		c.one.b = op.Values[op.Field]
		return c.exec(ctx, c.hsetOne)
	}
	c.setValues(op)
	return c.exec(ctx, c.hsetAll)
}

func (c *client) setValues(op *workload.Op) {
	for i := range c.vals {
		c.vals[i].b = op.Values[i]
	}
}

// insertHash is HSET of every field and ZADD of the key to the scan index,
// sent together in one round trip (YCSB's binding sends them one after the
// other).
func (c *client) insertHash(ctx context.Context, op *workload.Op) error {
	c.setValues(op)
	c.score = keyScore(c.key.b)
	c.hsetAll.SetErr(nil)
	c.zadd.SetErr(nil)
	_ = c.pipe.BatchProcess(ctx, c.fresh(ctx, c.hsetAll), c.fresh(ctx, c.zadd))
	_, err := c.pipe.Exec(ctx)
	return err
}

// scanHash finds up to ScanLength keys from the op's key in the index
// (ZRANGEBYSCORE from its score, as YCSB's binding) and reads them in one
// pipelined round trip. Index entries whose record is gone are skipped.
func (c *client) scanHash(ctx context.Context, op *workload.Op) error {
	c.min = keyScore(c.key.b)
	c.count = int64(op.ScanLength)
	rd := c.reader()
	zr := c.fresh(ctx, c.zrange).(*redis.StringSliceCmd)
	if err := rd.Process(ctx, zr); err != nil {
		return err
	}
	keys := zr.Val()
	if len(keys) == 0 {
		return nil
	}
	if c.t.cluster {
		return c.scanFresh(ctx, keys, op.Field)
	}
	pipe := c.pipe
	if rd != c.rdb {
		pipe = rd.Pipeline()
	}
	if len(c.scan) < len(keys) {
		c.growScan(len(keys))
	}
	if op.Field >= 0 {
		c.fieldName = c.t.fields[op.Field]
	}
	c.scanCmds = c.scanCmds[:0]
	for i, k := range keys {
		s := &c.scan[i]
		s.key = k
		rc := s.all
		if op.Field >= 0 {
			rc = s.oneField
		}
		rc.sink.reset()
		rc.cmd.SetErr(nil)
		c.scanCmds = append(c.scanCmds, rc.cmd)
	}
	_ = pipe.BatchProcess(ctx, c.scanCmds...)
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	for i := range keys {
		rc := c.scan[i].all
		if op.Field >= 0 {
			rc = c.scan[i].oneField
		}
		if err := rc.sink.result(op.Field >= 0); err != nil && err != target.ErrNotFound {
			return err
		}
	}
	return nil
}

// growScan makes room for n scan reads. The slots' commands point at their
// own key strings, so the slice is rebuilt whole.
func (c *client) growScan(n int) {
	c.scan = make([]scanSlot, max(n, 2*len(c.scan)))
	for i := range c.scan {
		s := &c.scan[i]
		s.all = newRawCmd(c.scratch, "HGETALL", &s.key)
		s.oneField = newRawCmd(c.scratch, "HMGET", &s.key, &c.fieldName)
	}
}

func (c *client) doString(ctx context.Context, op *workload.Op) error {
	switch op.Type {
	case workload.Read:
		return c.readString(ctx)
	case workload.Update:
		return c.writeString(ctx, op)
	case workload.Insert:
		c.setRecord(op)
		return c.exec(ctx, c.set)
	case workload.ReadModifyWrite:
		if err := c.readString(ctx); err != nil {
			return err
		}
		return c.writeString(ctx, op)
	}
	return fmt.Errorf("redis target: mode string cannot run %v operations", op.Type)
}

// readString is GET key: the whole record, whichever field the op names.
func (c *client) readString(ctx context.Context) error {
	rd := c.reader()
	if c.t.cluster {
		return c.readFresh(ctx, rd, c.get, false)
	}
	c.get.sink.reset()
	if err := rd.Process(ctx, c.get.cmd); err != nil {
		return err
	}
	return c.get.sink.result(false)
}

// writeString is SET of the whole record, or SETRANGE of one field at its
// place in it (field i at byte i*field_length).
func (c *client) writeString(ctx context.Context, op *workload.Op) error {
	if op.Field >= 0 {
		c.offset = int64(op.Field * c.t.fieldLen)
		c.one.b = op.Values[op.Field]
		return c.exec(ctx, c.setrange)
	}
	c.setRecord(op)
	return c.exec(ctx, c.set)
}

// setRecord concatenates the op's fields into the record argument.
func (c *client) setRecord(op *workload.Op) {
	if len(op.Values) == 1 {
		c.record.b = op.Values[0]
		return
	}
	c.recordBuf = c.recordBuf[:0]
	for _, v := range op.Values {
		c.recordBuf = append(c.recordBuf, v...)
	}
	c.record.b = c.recordBuf
}

// LoadBatch implements target.Loader: every record of the batch (HSET and
// ZADD, or SET) in one MULTI/EXEC transaction, one round trip. A Redis
// Cluster gets a plain pipeline instead (split by node, sent to the nodes
// at once): a transaction there could only cover the keys of one slot.
func (c *client) LoadBatch(ctx context.Context, ops []*workload.Op) error {
	if len(c.load) < len(ops) {
		c.growLoad(len(ops))
	}
	tx := c.rdb.TxPipeline()
	if c.t.cluster {
		tx = c.rdb.Pipeline()
	}
	for i, op := range ops {
		s := &c.load[i]
		if len(c.t.prefix) == 0 {
			s.key.b = op.Key
		} else {
			s.keyBuf = append(append(s.keyBuf[:0], c.t.prefix...), op.Key...)
			s.key.b = s.keyBuf
		}
		if c.t.opts.Mode == modeString {
			s.recordBuf = s.recordBuf[:0]
			for _, v := range op.Values {
				s.recordBuf = append(s.recordBuf, v...)
			}
			s.record.b = s.recordBuf
			s.set.SetErr(nil)
			_ = tx.Process(ctx, c.fresh(ctx, s.set))
			continue
		}
		for f := range s.vals {
			s.vals[f].b = op.Values[f]
		}
		s.score = keyScore(s.key.b)
		s.hset.SetErr(nil)
		s.zadd.SetErr(nil)
		_ = tx.BatchProcess(ctx, c.fresh(ctx, s.hset), c.fresh(ctx, s.zadd))
	}
	cmds, err := tx.Exec(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "EXECABORT") {
		// The server refused a command while queueing it (OOM, for
		// example); that refusal, not the abort, says what went wrong.
		for _, cmd := range cmds {
			if cerr := cmd.Err(); cerr != nil && !strings.HasPrefix(cerr.Error(), "EXECABORT") {
				err = cerr
				break
			}
		}
	}
	return classify(err)
}

func (c *client) growLoad(n int) {
	ctx := context.Background()
	c.load = make([]loadSlot, max(n, 2*len(c.load)))
	for i := range c.load {
		s := &c.load[i]
		if c.t.opts.Mode == modeString {
			s.set = redis.NewStatusCmd(ctx, "SET", &s.key, &s.record)
			continue
		}
		s.vals = make([]argBytes, len(c.t.fields))
		s.hset = redis.NewIntCmd(ctx, hsetArgs(c.t.fields, &s.key, s.vals)...)
		s.zadd = redis.NewIntCmd(ctx, "ZADD", c.t.index, &s.score, &s.key)
	}
}

// keyScore is the key's score in the scan index: Java's String.hashCode of
// the key, as YCSB's binding computes it (for the ASCII keys YCSB uses).
func keyScore(key []byte) float64 {
	var h int32
	for _, b := range key {
		h = 31*h + int32(b)
	}
	return float64(h)
}

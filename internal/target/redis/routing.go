package redistarget

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/target"
)

// conn is what a client sends commands through: a *redis.Client (one
// server, a primary, a replica) or a *redis.ClusterClient (Redis Cluster).
type conn interface {
	Process(ctx context.Context, cmd redis.Cmder) error
	Pipeline() redis.Pipeliner
	TxPipeline() redis.Pipeliner
}

// reader is where the client's next read goes: the next replica in turn
// when the options say read_from: replicas (the list changes as replicas
// join and leave), otherwise the connection the writes use.
func (c *client) reader() conn {
	if c.t.readers == nil || c.primaryOnly {
		return c.rdb
	}
	rs := c.t.readers.Load()
	if rs == nil || len(*rs) == 0 {
		return c.rdb
	}
	c.rr++
	return (*rs)[c.rr%uint64(len(*rs))]
}

// A Redis Cluster client cannot reuse the client's command objects: go-redis
// caches a command's slot in it on first use, and reads the key through
// the command's arguments, which the holders (argBytes, *string) hide. Nor
// can it stream a read's raw reply: a -MOVED or -ASK reply would reach the
// sink instead of the cluster client, which follows it. So in cluster mode
// every request is a fresh command with the holders' current values, and
// reads decode their reply (both cost allocations the single-server path
// avoids).

// values returns args with the client's argument holders replaced by what
// they hold now.
func values(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case *argBytes:
			out[i] = v.b
		case *string:
			out[i] = *v
		case *float64:
			out[i] = *v
		case *int64:
			out[i] = *v
		default:
			out[i] = a
		}
	}
	return out
}

// fresh is cmd itself, or in cluster mode a new command of its kind with
// its arguments' current values.
func (c *client) fresh(ctx context.Context, cmd redis.Cmder) redis.Cmder {
	if !c.t.cluster {
		return cmd
	}
	args := values(cmd.Args())
	switch cmd.(type) {
	case *redis.IntCmd:
		return redis.NewIntCmd(ctx, args...)
	case *redis.StatusCmd:
		return redis.NewStatusCmd(ctx, args...)
	case *redis.StringSliceCmd:
		return redis.NewStringSliceCmd(ctx, args...)
	}
	return redis.NewCmd(ctx, args...)
}

// exec sends a write to the primary (or the slot's owner).
func (c *client) exec(ctx context.Context, cmd redis.Cmder) error {
	return c.rdb.Process(ctx, c.fresh(ctx, cmd))
}

// readFresh is rc's read as a fresh command whose reply go-redis decodes;
// a nil reply, an empty array, or (elementNil) a nil first element is
// target.ErrNotFound, as replySink.result says for the raw path.
func (c *client) readFresh(ctx context.Context, rd conn, rc rawCmd, elementNil bool) error {
	cmd := redis.NewCmd(ctx, values(rc.cmd.Args())...)
	_ = rd.Process(ctx, cmd)
	return readResult(cmd, elementNil)
}

func readResult(cmd *redis.Cmd, elementNil bool) error {
	v, err := cmd.Result()
	if err == redis.Nil {
		return target.ErrNotFound
	}
	if err != nil {
		return err
	}
	if s, ok := v.([]any); ok && (len(s) == 0 || elementNil && s[0] == nil) {
		return target.ErrNotFound
	}
	return nil
}

// scanFresh reads a scan's records in one pipeline that the cluster client
// splits by node; records whose key is gone are skipped.
func (c *client) scanFresh(ctx context.Context, keys []string, field int) error {
	cmds := make([]*redis.Cmd, len(keys))
	all := make([]redis.Cmder, len(keys))
	for i, k := range keys {
		if field >= 0 {
			cmds[i] = redis.NewCmd(ctx, "HMGET", k, c.t.fields[field])
		} else {
			cmds[i] = redis.NewCmd(ctx, "HGETALL", k)
		}
		all[i] = cmds[i]
	}
	_ = c.pipe.BatchProcess(ctx, all...)
	_, _ = c.pipe.Exec(ctx)
	for _, cmd := range cmds {
		if err := readResult(cmd, field >= 0); err != nil && err != target.ErrNotFound {
			return err
		}
	}
	return nil
}

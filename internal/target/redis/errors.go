package redistarget

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-dev/headroom/internal/target"
)

// busyReplies are the error prefixes with which Redis refuses a command for
// lack of resources, or for now: still loading its data set, blocked by a
// long script, out of memory (maxmemory), asking to try again (a
// multi-key command while a Redis Cluster slot moves), or a cluster that
// is not serving its slots.
var busyReplies = []string{"LOADING", "BUSY", "OOM", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"}

// classify gives an error from go-redis its kind for the per-interval error
// counts (internal/target/kinds.go). Context errors pass through unwrapped.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := re.Error()
		for _, p := range busyReplies {
			if strings.HasPrefix(msg, p) {
				return &target.KindError{K: target.KindBusy, Err: err}
			}
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, redis.ErrPoolTimeout) {
		return &target.KindError{K: target.KindTimeout, Err: err}
	}
	if target.IsConnectionError(err) || errors.Is(err, redis.ErrClosed) {
		return &target.KindError{K: target.KindConnection, Err: err}
	}
	return err
}

// replyError is an error reply that came through a raw reply sink.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError makes it a redis.Error, so classify reads its prefix.
func (replyError) RedisError() {}

package cassandra

import (
	"context"
	"errors"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

func TestRetryPopulate(t *testing.T) {
	waits := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	timeout := &gocql.RequestErrWriteTimeout{}
	invalid := errors.New("Invalid query")
	cases := []struct {
		name      string
		fails     []error // what the first attempts return; nil after
		wantCalls int
		wantErr   error
	}{
		{"succeeds at once", nil, 1, nil},
		{"a write timeout then success", []error{timeout, timeout}, 3, nil},
		{"overloaded then success", []error{&gocql.RequestErrOverloaded{}}, 2, nil},
		{"timeouts outlast the waits", []error{timeout, timeout, timeout, timeout, timeout}, 4, timeout},
		{"a permanent error is not retried", []error{invalid}, 1, invalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			err := retryPopulate(context.Background(), waits, func() error {
				calls++
				if calls <= len(c.fails) {
					return c.fails[calls-1]
				}
				return nil
			})
			if calls != c.wantCalls || !errors.Is(err, c.wantErr) {
				t.Fatalf("calls %d, err %v; want %d calls, err %v", calls, err, c.wantCalls, c.wantErr)
			}
		})
	}
}

// A cancelled population does not sit out the waits.
func TestRetryPopulateStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	start := time.Now()
	err := retryPopulate(ctx, []time.Duration{time.Hour}, func() error { calls++; return &gocql.RequestErrWriteTimeout{} })
	if calls != 1 || err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("calls %d, err %v after %v; want one call and its error at once", calls, err, time.Since(start))
	}
}

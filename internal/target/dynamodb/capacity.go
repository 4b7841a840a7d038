package dynamotarget

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
)

// Provisioned throughput, as DynamoDB charges it (seed 002 §V; DynamoDB's
// capacity rules):
//
//   - the size of an item is the length of its attribute names plus the
//     length of their values (UTF-8 bytes);
//   - a read of an item of s bytes costs ceil(s / 4 KB) read units when
//     strongly consistent, half that when eventually consistent, whatever
//     part of the item it returns;
//   - a write (PutItem, UpdateItem) costs ceil(s / 1 KB) write units;
//   - a scan costs the read units of the items it reads taken together:
//     ceil(sum of their sizes / 4 KB), halved when eventually consistent.
//
// A YCSB record of 10 fields of 100 bytes is 1,085 bytes and more: two
// write units per write, which is why seed 002 shortened the fields to 90
// bytes (985 bytes, one unit).
//
// Costs are counted in milli-units, so that an eventually consistent read
// of 0.5 units is an integer.
const (
	milli      = 1000
	readUnit   = 4096 // bytes of item one read unit covers
	writeUnit  = 1024 // bytes of item one write unit covers
	keyAttr    = "pk" // the table's hash key attribute
	fieldAttrs = "field"
)

// itemSize is the DynamoDB size of a YCSB record with key of keyLen bytes
// and fields field0..field(n-1) of fieldLen bytes each.
func itemSize(keyLen, fields, fieldLen int) int {
	s := len(keyAttr) + keyLen
	for i := range fields {
		s += len(fieldAttrs) + digits(i) + fieldLen
	}
	return s
}

func digits(i int) int {
	n := 1
	for ; i >= 10; i /= 10 {
		n++
	}
	return n
}

// readCost is the milli-units of reading bytes of items.
func readCost(bytes int, consistent bool) int64 {
	units := int64((bytes + readUnit - 1) / readUnit)
	if units == 0 {
		units = 1 // a read of nothing (a missing item) still costs the minimum
	}
	if consistent {
		return units * milli
	}
	return units * milli / 2
}

// writeCost is the milli-units of writing an item of bytes.
func writeCost(bytes int) int64 {
	return max(1, int64((bytes+writeUnit-1)/writeUnit)) * milli
}

// ErrThrottled is wrapped by the error of a request the emulated table
// refused: the error the service gives is a
// ProvisionedThroughputExceededException, of kind "throttled" in the
// per-interval error counts.
var ErrThrottled = errors.New("ProvisionedThroughputExceededException")

// bucket holds one direction (reads or writes) of a table to its
// provisioned rate, shared by every client of the target. It is a token
// bucket of burst × rate units that fills at rate units per second and
// starts empty (a new table has no unused capacity yet), written as the
// generic cell rate algorithm (GCRA; ITU-T I.371): instead of a token
// count it keeps tat, the time at which the bucket would be full again.
// With inc(c) = c / rate, the time to earn c units, a request of c units
// at time now is admitted when
//
//	max(tat, now) + inc(c) - now <= burst
//
// (the bucket holds at least c units: tokens(now) = rate × (burst -
// max(0, tat - now))), and then tat = max(tat, now) + inc(c). A refused
// request takes nothing, as in DynamoDB, where a throttled request uses no
// capacity. One compare-and-swap per request, no lock, no allocation.
type bucket struct {
	rate  int64 // units per second
	burst int64 // ns: the bucket's size as time at rate
	t0    time.Time
	tat   atomic.Int64 // ns since t0
	err   error        // the one error every refused request gets
}

// newBucket is an empty bucket of rate units per second that keeps burst
// of unused capacity; what names the direction and table in the error.
func newBucket(rate int, burst time.Duration, what string) *bucket {
	b := &bucket{rate: int64(rate), burst: int64(burst), t0: time.Now()}
	b.tat.Store(b.burst)
	b.err = &target.KindError{K: KindThrottled, Err: fmt.Errorf("%w: the request would exceed the %s of %d units per second (emulated by Headroom)", ErrThrottled, what, rate)}
	return b
}

// KindThrottled is the error kind of a request refused for exceeding the
// provisioned throughput.
const KindThrottled = "throttled"

// inc is the time, in ns, in which the bucket earns cost milli-units.
func (b *bucket) inc(cost int64) int64 { return cost * (1e9 / milli) / b.rate }

// take admits a request of cost milli-units at now (ns since t0) and
// reports whether it was admitted.
func (b *bucket) take(now, cost int64) bool {
	inc := b.inc(cost)
	for {
		tat := b.tat.Load()
		next := max(tat, now) + inc
		if next-now > b.burst {
			return false
		}
		if b.tat.CompareAndSwap(tat, next) {
			return true
		}
	}
}

// admit takes cost milli-units now, or returns the throttling error.
func (b *bucket) admit(cost int64) error {
	if b == nil || b.take(int64(time.Since(b.t0)), cost) {
		return nil
	}
	return b.err
}

// fits reports whether a request of cost milli-units can ever be admitted.
func (b *bucket) fits(cost int64) bool { return b == nil || b.inc(cost) <= b.burst }

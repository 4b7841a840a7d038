package dynamotarget

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
)

const ms = int64(time.Millisecond)

// admitted feeds the bucket requests of cost milli-units at the given
// times (ms since the bucket's start) and returns the times admitted.
func admitted(b *bucket, cost int64, times []int64) []int64 {
	var out []int64
	for _, t := range times {
		if b.take(t*ms, cost) {
			out = append(out, t)
		}
	}
	return out
}

// every lists from, from+step, ... below to.
func every(from, to, step int64) []int64 {
	var out []int64
	for t := from; t < to; t += step {
		out = append(out, t)
	}
	return out
}

// The bucket starts empty: 10 units per second, 1 s of burst, one-unit
// requests every 50 ms from t = 0 to 1,950 ms (40 of them, twice the
// rate). A unit is earned every 100 ms, so the first request that finds
// one is at 100 ms, and from then each one at a multiple of 100 ms takes
// the unit earned since the last: 100, 200, ..., 1,900 ms = 19 admitted;
// the ones between (150, 250, ...) find the bucket empty.
func TestBucketStartsEmptyAndAdmitsTheRate(t *testing.T) {
	b := newBucket(10, time.Second, "test capacity")
	got := admitted(b, 1*milli, every(0, 2000, 50))
	want := every(100, 2000, 100)
	if !equal(got, want) {
		t.Fatalf("admitted at %v ms, want %v", got, want)
	}
}

// After a second idle the bucket is full (10 units). Requests every 50 ms
// from t = 1,000 ms: request k (at 1000 + 50k) is admitted while the
// bucket still holds a unit, i.e. while 10 units + the 0.5 unit earned per
// 50 ms cover k+1 units: 10 + 0.5k >= k+1, k <= 18. So 19 of the 20
// requests up to 1,950 ms pass, the 20th (1,950 ms) is the first refused,
// and from then one every 100 ms passes again (2,000, 2,100, ...).
func TestBucketSpendsItsBurstThenHoldsTheRate(t *testing.T) {
	b := newBucket(10, time.Second, "test capacity")
	got := admitted(b, 1*milli, every(1000, 2300, 50))
	want := append(every(1000, 1950, 50), 2000, 2100, 2200)
	if !equal(got, want) {
		t.Fatalf("admitted at %v ms, want %v", got, want)
	}
}

// Eventually consistent reads cost half a unit: with 1 unit per second
// and 1 s of burst, a full bucket (t = 1 s) takes two at once and refuses
// the third; 500 ms later it has earned one more half unit.
func TestBucketHalfUnits(t *testing.T) {
	b := newBucket(1, time.Second, "test capacity")
	got := admitted(b, milli/2, []int64{1000, 1000, 1000, 1400, 1500, 1500})
	want := []int64{1000, 1000, 1500}
	if !equal(got, want) {
		t.Fatalf("admitted at %v ms, want %v", got, want)
	}
}

// A long idle time does not grow the bucket past its burst: after 10 s
// idle, a 3 s burst at 5 units/s admits 15 units at once, not 50.
func TestBucketKeepsAtMostItsBurst(t *testing.T) {
	b := newBucket(5, 3*time.Second, "test capacity")
	n := 0
	for b.take(10_000*ms, milli) {
		n++
	}
	if n != 15 {
		t.Fatalf("admitted %d one-unit requests at once after a long idle time, want 15", n)
	}
}

// Clients share the bucket: 8 goroutines taking at one instant from a
// full bucket of 100 units get exactly 100 between them.
func TestBucketIsSharedWithoutLosingUnits(t *testing.T) {
	b := newBucket(100, time.Second, "test capacity")
	var mu sync.Mutex
	total := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for range 50 {
				if b.take(int64(time.Second), milli) {
					n++
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if total != 100 {
		t.Fatalf("8 clients got %d units from a bucket of 100", total)
	}
}

func TestRefusalIsThrottled(t *testing.T) {
	b := newBucket(1, time.Second, "table's provisioned write capacity")
	err := b.admit(5 * milli)
	var k target.Kinder
	if !errors.As(err, &k) || k.Kind() != "throttled" || !errors.Is(err, ErrThrottled) {
		t.Fatalf("refusal = %v, want a ProvisionedThroughputExceededException of kind throttled", err)
	}
	if got := b.admit(5 * milli); got != err {
		t.Fatalf("a second refusal built a new error: %v", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = b.admit(milli) }); allocs != 0 {
		t.Fatalf("admit allocates %.0f times per request", allocs)
	}
	var none *bucket
	if err := none.admit(1000 * milli); err != nil {
		t.Fatalf("no bucket (on-demand) refused: %v", err)
	}
}

// Costs by DynamoDB's rules, computed by hand: a YCSB key "user" + 19
// digits is 23 bytes; field names field0..field9 are 6 bytes.
func TestCosts(t *testing.T) {
	for _, c := range []struct {
		name                  string
		size                  int
		read, eventual, write int64
	}{
		// 2 + 23 + 10 × (6 + 100) = 1,085 bytes: over 1 KB, two write units.
		{"ycsb default", itemSize(23, 10, 100), 1000, 500, 2000},
		// 2 + 23 + 10 × (6 + 90) = 985 bytes: seed 002's one-unit record.
		{"seed 002", itemSize(23, 10, 90), 1000, 500, 1000},
		// 2 + 23 + 6 + 4,096 = 4,127 bytes: two read units, five write units.
		{"one big field", itemSize(23, 1, 4096), 2000, 1000, 5000},
	} {
		if got := readCost(c.size, true); got != c.read {
			t.Errorf("%s (%d bytes): strong read %d milli-units, want %d", c.name, c.size, got, c.read)
		}
		if got := readCost(c.size, false); got != c.eventual {
			t.Errorf("%s (%d bytes): eventual read %d milli-units, want %d", c.name, c.size, got, c.eventual)
		}
		if got := writeCost(c.size); got != c.write {
			t.Errorf("%s (%d bytes): write %d milli-units, want %d", c.name, c.size, got, c.write)
		}
	}
	if s := itemSize(23, 10, 100); s != 1085 {
		t.Errorf("YCSB default record is %d bytes, want 1085", s)
	}
	// A scan of 10 default records reads 10,850 bytes: 3 units (4 KB
	// each) strongly consistent, 1.5 eventually.
	if got := readCost(10*1085, false); got != 1500 {
		t.Errorf("scan of 10 records: %d milli-units, want 1500", got)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

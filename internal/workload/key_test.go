package workload

import (
	"strconv"
	"testing"
)

// naiveYCSBHash is the definition of ycsbHash without the short cut for
// values below 2^32.
func naiveYCSBHash(v uint64) uint64 {
	h := uint64(fnvOffset64)
	for range 8 {
		h ^= v & 0xff
		h *= fnvPrime64
		v >>= 8
	}
	if int64(h) < 0 {
		h = -h
	}
	return h
}

func TestYCSBHash(t *testing.T) {
	r := newRNG(1)
	inputs := []uint64{0, 1, 255, 256, 1<<32 - 1, 1 << 32, 1<<64 - 1}
	for range 10_000 {
		x := r.u64()
		inputs = append(inputs, x, x>>32, x>>40)
	}
	for _, v := range inputs {
		if got, want := ycsbHash(v), naiveYCSBHash(v); got != want {
			t.Fatalf("ycsbHash(%d) = %d, want %d", v, got, want)
		}
		if ycsbHash(v) > 1<<63 {
			t.Fatalf("ycsbHash(%d) = %d is not an absolute value", v, ycsbHash(v))
		}
	}
}

// TestKeyName checks YCSB's key names: record 0 of a hashed key space is
// "user6284781860667377211" in YCSB.
func TestKeyName(t *testing.T) {
	for _, c := range []struct {
		keynum  uint64
		ordered bool
		want    string
	}{
		{0, false, "user6284781860667377211"},
		{0, true, "user0"},
		{42, true, "user42"},
		{1<<64 - 1, true, "user18446744073709551615"},
		{7, false, "user" + strconv.FormatUint(naiveYCSBHash(7), 10)},
	} {
		if got := string(KeyName(nil, c.keynum, c.ordered)); got != c.want {
			t.Errorf("KeyName(%d, %v) = %q, want %q", c.keynum, c.ordered, got, c.want)
		}
	}
	dst := append(make([]byte, 0, 32), "x:"...)
	if got := string(KeyName(dst, 5, true)); got != "x:user5" {
		t.Errorf("KeyName appends: got %q", got)
	}
	if a := testing.AllocsPerRun(100, func() { dst = KeyName(dst[:0], 1<<63, false) }); a != 0 {
		t.Errorf("KeyName allocates %v times with room in dst", a)
	}
}

// TestModulus compares Barrett reduction with the % operator.
func TestModulus(t *testing.T) {
	r := newRNG(2)
	for _, n := range []uint64{1, 2, 3, 7, 10, 1000, 1 << 20, 1<<32 + 1, 999_999_937, 1 << 62, 1<<63 + 5, 1<<64 - 1} {
		m := newModulus(n)
		for _, x := range []uint64{0, 1, n - 1, n, n + 1, 1<<64 - 1, 1 << 63} {
			if got := m.reduce(x); got != x%n {
				t.Fatalf("%d mod %d = %d, want %d", x, n, got, x%n)
			}
		}
		for range 10_000 {
			x := r.u64()
			if got := m.reduce(x); got != x%n {
				t.Fatalf("%d mod %d = %d, want %d", x, n, got, x%n)
			}
		}
	}
}

// TestAppendDecimal compares appendDecimal with strconv.AppendUint.
func TestAppendDecimal(t *testing.T) {
	r := newRNG(3)
	inputs := []uint64{0, 9, 10, 99_999_999, 100_000_000, 100_000_001, 1e16 - 1, 1e16, 1e16 + 7, 1<<64 - 1}
	for _, p := range pow10 {
		inputs = append(inputs, p-1, p, p+1)
	}
	for range 100_000 {
		x := r.u64()
		inputs = append(inputs, x, x>>(x%64))
	}
	for _, v := range inputs {
		got := string(appendDecimal([]byte("k"), v))
		if want := "k" + strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendDecimal(%d) = %q, want %q", v, got, want)
		}
	}
}

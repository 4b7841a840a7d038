package workload

import (
	"bytes"
	"slices"
	"sync"
	"testing"
)

// TestPresetMix checks the operation mix of each YCSB core workload with a
// chi-square test over its operation types.
func TestPresetMix(t *testing.T) {
	const draws = 200_000
	for i, name := range PresetNames() {
		c, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		g := mustNew(t, c, 10+uint64(i))
		op := g.NewOp()
		var counts [NumOpTypes]int64
		for range draws {
			g.Next(op)
			counts[op.Type]++
		}
		var obs []int64
		var p []float64
		for ty, w := range c.Mix {
			if w == 0 {
				if counts[ty] != 0 {
					t.Errorf("workload %s: %d %v operations, weight 0", name, counts[ty], OpType(ty))
				}
				continue
			}
			obs, p = append(obs, counts[ty]), append(p, w)
		}
		if len(obs) == 1 {
			continue // workload c: reads only, checked above
		}
		t.Logf("workload %s: %v", name, counts)
		checkFit(t, "workload "+name+" operation mix", obs, p)
	}
}

// sameOp reports whether two ops are equal in every field Next sets
// (values compared in full when all are written, else the written one).
func sameOp(a, b *Op) bool {
	if a.Type != b.Type || a.KeyNum != b.KeyNum || !bytes.Equal(a.Key, b.Key) ||
		a.Field != b.Field || a.ScanLength != b.ScanLength {
		return false
	}
	switch {
	case a.Type == Read || a.Type == Scan:
		return true
	case a.Field >= 0:
		return bytes.Equal(a.Values[a.Field], b.Values[b.Field])
	}
	for i := range a.Values {
		if !bytes.Equal(a.Values[i], b.Values[i]) {
			return false
		}
	}
	return true
}

// TestDeterminism: the same Config and seed give the same operations; other
// seeds give others.
func TestDeterminism(t *testing.T) {
	for _, name := range PresetNames() {
		c, _ := Preset(name)
		c.ReadAllFields = false
		g1, g2, g3 := mustNew(t, c, 77), mustNew(t, c, 77), mustNew(t, c, 78)
		o1, o2, o3 := g1.NewOp(), g2.NewOp(), g3.NewOp()
		differ := 0
		for i := range 10_000 {
			g1.Next(o1)
			g2.Next(o2)
			g3.Next(o3)
			if !sameOp(o1, o2) {
				t.Fatalf("workload %s, op %d: same seed, different ops %+v and %+v", name, i, o1, o2)
			}
			if !sameOp(o1, o3) {
				differ++
			}
		}
		if differ < 5000 {
			t.Errorf("workload %s: seeds 77 and 78 differ in only %d of 10000 ops", name, differ)
		}
	}
}

// TestForkStreams: forks are deterministic functions of the parent's stream
// and the stream number, independent of the parent's progress, and differ
// from each other and from the parent.
func TestForkStreams(t *testing.T) {
	c, _ := Preset("a")
	seq := func(g *Generator) []uint64 {
		op := g.NewOp()
		var keys []uint64
		for range 200 {
			g.Next(op)
			keys = append(keys, op.KeyNum<<1|uint64(op.Type))
		}
		return keys
	}
	a, b := mustNew(t, c, 1), mustNew(t, c, 1)
	fa := seq(a.Fork(3))
	seq(b) // advance b first: its forks must not change
	if fb := seq(b.Fork(3)); !slices.Equal(fa, fb) {
		t.Error("Fork(3) of equal generators differ")
	}
	if slices.Equal(fa, seq(a.Fork(4))) {
		t.Error("Fork(3) and Fork(4) are equal")
	}
	if slices.Equal(fa, seq(mustNew(t, c, 1))) {
		t.Error("Fork(3) equals its parent")
	}
	if slices.Equal(seq(a.Fork(3).Fork(1)), seq(a.Fork(1))) {
		t.Error("a fork's fork equals a fork of the parent with the same stream")
	}
}

// TestForkSharesInsertCounter: inserts through a generator and its forks,
// also concurrently, take distinct consecutive key numbers from RecordCount.
func TestForkSharesInsertCounter(t *testing.T) {
	c, _ := Preset("a")
	c.Mix = [NumOpTypes]float64{Insert: 1}
	g := mustNew(t, c, 1)
	f := g.Fork(1)
	op := g.NewOp()
	for i, gen := range []*Generator{g, f, g, f.Fork(2)} {
		gen.Next(op)
		if want := uint64(c.RecordCount) + uint64(i); op.KeyNum != want || op.Type != Insert {
			t.Fatalf("insert %d: %v of key %d, want insert of %d", i, op.Type, op.KeyNum, want)
		}
	}

	const workers, each = 8, 1000
	keys := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			gen := g.Fork(uint64(100 + w))
			op := gen.NewOp()
			for range each {
				gen.Next(op)
				keys[w] = append(keys[w], op.KeyNum)
			}
		}(w)
	}
	wg.Wait()
	all := slices.Concat(keys...)
	slices.Sort(all)
	for i, k := range all {
		if want := uint64(c.RecordCount) + 4 + uint64(i); k != want {
			t.Fatalf("concurrent inserts: sorted key %d is %d, want %d", i, k, want)
		}
	}
}

// TestNextAllocatesNothing covers every distribution and field rule.
func TestNextAllocatesNothing(t *testing.T) {
	var configs []Config
	for _, name := range PresetNames() {
		c, _ := Preset(name)
		configs = append(configs, c)
	}
	for _, d := range RequestDistributions() {
		c, _ := Preset("a")
		c.RequestDistribution = d
		c.Mix = [NumOpTypes]float64{1, 1, 1, 1, 1}
		c.ReadAllFields, c.WriteAllFields = false, true
		c.ScanLengthDistribution = DistZipfian
		configs = append(configs, c)
	}
	for _, c := range configs {
		g := mustNew(t, c, 1)
		op := g.NewOp()
		if a := testing.AllocsPerRun(2000, func() { g.Next(op) }); a != 0 {
			t.Errorf("%v: Next allocates %v times per call", c, a)
		}
		i := int64(0)
		if a := testing.AllocsPerRun(200, func() { g.Populate(i%c.RecordCount, op); i++ }); a != 0 {
			t.Errorf("%v: Populate allocates %v times per call", c, a)
		}
	}
}

// TestFieldRules checks Field and which values Next writes.
func TestFieldRules(t *testing.T) {
	for _, c := range []struct {
		readAll, writeAll bool
	}{{true, false}, {false, true}, {false, false}, {true, true}} {
		cfg, _ := Preset("a")
		cfg.Mix = [NumOpTypes]float64{1, 1, 1, 1, 1}
		cfg.ReadAllFields, cfg.WriteAllFields = c.readAll, c.writeAll
		g := mustNew(t, cfg, 12)
		op := g.NewOp()
		fields := make([]int64, cfg.FieldCount)
		for range 20_000 {
			for _, v := range op.Values {
				clear(v)
			}
			g.Next(op)
			written := 0
			for i, v := range op.Values {
				if len(v) != cfg.FieldLength {
					t.Fatalf("value %d has %d bytes", i, len(v))
				}
				if v[0] != 0 {
					written++
				}
			}
			var wantField bool // a single field is chosen
			var wantWritten int
			switch op.Type {
			case Read, Scan:
				wantField = !c.readAll
			case Update, ReadModifyWrite:
				wantField = !c.writeAll
				wantWritten = cfg.FieldCount
				if wantField {
					wantWritten = 1
				}
			case Insert:
				wantWritten = cfg.FieldCount
			}
			if (op.Field >= 0) != wantField || op.Field >= cfg.FieldCount || op.Field < -1 {
				t.Fatalf("%+v: %v with Field %d", c, op.Type, op.Field)
			}
			if written != wantWritten || (wantWritten == 1 && op.Values[op.Field][0] == 0) {
				t.Fatalf("%+v: %v with Field %d wrote %d values", c, op.Type, op.Field, written)
			}
			if (op.Type == Scan) != (op.ScanLength > 0) {
				t.Fatalf("%v with scan length %d", op.Type, op.ScanLength)
			}
			if op.Field >= 0 {
				fields[op.Field]++
			}
		}
		if !c.readAll || !c.writeAll {
			checkFit(t, "chosen fields", fields, uniformPMF(cfg.FieldCount))
		}
	}
}

// TestPopulate: record i is an insert of key i with all values, a function
// of the seed and i only.
func TestPopulate(t *testing.T) {
	c, _ := Preset("a")
	g := mustNew(t, c, 3)
	other := mustNew(t, c, 3)
	f := g.Fork(5)
	op, op2 := g.NewOp(), g.NewOp()
	seen := map[string]bool{}
	for i := range c.RecordCount {
		g.Populate(i, op)
		if op.Type != Insert || op.KeyNum != uint64(i) || op.Field != -1 || op.ScanLength != 0 {
			t.Fatalf("record %d: %+v", i, op)
		}
		if want := KeyName(nil, uint64(i), false); !bytes.Equal(op.Key, want) {
			t.Fatalf("record %d: key %q, want %q", i, op.Key, want)
		}
		for _, gen := range []*Generator{other, f} {
			gen.Populate(i, op2)
			if !sameOp(op, op2) {
				t.Fatalf("record %d differs between generators with seed 3", i)
			}
		}
		v := string(op.Values[0])
		if seen[v] {
			t.Fatalf("record %d repeats a value", i)
		}
		seen[v] = true
	}
	mustNew(t, c, 4).Populate(0, op2)
	g.Populate(0, op)
	if sameOp(op, op2) {
		t.Error("seeds 3 and 4 populate record 0 alike")
	}
}

// TestValueAlphabet: values use 64 printable characters (no backslash, quote
// or space), uniformly.
func TestValueAlphabet(t *testing.T) {
	r := newRNG(8)
	var counts [256]int64
	buf := make([]byte, 1003)
	for range 1000 {
		fillValue(buf, &r)
		for _, b := range buf {
			counts[b]++
		}
	}
	var alphabet []byte
	for b := '>'; b <= '~'; b++ {
		if b != '\\' {
			alphabet = append(alphabet, byte(b))
		}
	}
	if len(alphabet) != 64 {
		t.Fatalf("alphabet has %d characters", len(alphabet))
	}
	var obs []int64
	for b, n := range counts {
		if !bytes.ContainsRune(alphabet, rune(b)) {
			if n != 0 {
				t.Errorf("byte %q appears %d times", rune(b), n)
			}
			continue
		}
		obs = append(obs, n)
	}
	checkFit(t, "value bytes", obs, uniformPMF(64))
}

// TestOpWithoutNewOp: Next and Populate also work on a zero Op.
func TestOpWithoutNewOp(t *testing.T) {
	c, _ := Preset("a")
	c.Mix = [NumOpTypes]float64{Insert: 1}
	g := mustNew(t, c, 1)
	var op Op
	g.Next(&op)
	if len(op.Values) != c.FieldCount || len(op.Values[9]) != c.FieldLength {
		t.Fatalf("values not sized: %d", len(op.Values))
	}
	var op2 Op
	g.Populate(1, &op2)
	if len(op2.Values) != c.FieldCount || string(op2.Key) != string(KeyName(nil, 1, false)) {
		t.Fatalf("populate of a zero op: %+v", op2)
	}
}

// TestOrderedKeys: OrderedInserts names records by their number.
func TestOrderedKeys(t *testing.T) {
	c := readOnly(10, DistSequential)
	c.OrderedInserts = true
	g := mustNew(t, c, 1)
	op := g.NewOp()
	g.Next(op)
	g.Next(op)
	if string(op.Key) != "user1" {
		t.Errorf("key %q, want user1", op.Key)
	}
}

// A run that continues earlier runs' inserts takes new key numbers after
// theirs, in every fork.
func TestContinueInserts(t *testing.T) {
	c, _ := Preset("d")
	c.RecordCount = 100
	g, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if g.NextInsert() != 100 {
		t.Fatalf("NextInsert = %d, want 100", g.NextInsert())
	}
	g.ContinueInserts(250)
	f := g.Fork(3)
	op := g.NewOp()
	seen := 0
	for i := 0; i < 2000; i++ {
		f.Next(op)
		if op.Type == Insert {
			if op.KeyNum < 250 {
				t.Fatalf("insert reused key %d", op.KeyNum)
			}
			seen++
		} else if op.KeyNum >= g.NextInsert() {
			t.Fatalf("read of key %d beyond the inserted range %d", op.KeyNum, g.NextInsert())
		}
	}
	if seen == 0 || g.NextInsert() != uint64(250+seen) {
		t.Fatalf("inserts %d, NextInsert %d", seen, g.NextInsert())
	}
	g.ContinueInserts(5) // below RecordCount: clamped
	if g.NextInsert() != 100 {
		t.Fatalf("NextInsert after clamping = %d", g.NextInsert())
	}
}

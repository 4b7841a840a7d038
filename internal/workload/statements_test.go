package workload

import (
	"math"
	"strconv"
	"testing"
)

func stmtConfig() Config {
	c, _ := Preset("a")
	c.Statements = []Statement{
		{Name: "simple", Weight: 3, SQL: "SELECT * FROM c WHERE u = ?", Params: []ParamGen{{Kind: ParamUniform, Min: 1, Max: 100, Prefix: "UN"}}},
		{Name: "complex", Weight: 1, SQL: "SELECT * FROM i WHERE s = ? AND z = ?", Params: []ParamGen{
			{Kind: ParamChoice, Choices: []string{"ARTS", "HISTORY", "TRAVEL"}}, {Kind: ParamZipfian, Min: 10, Max: 19}}},
		{Name: "insert", Weight: 0, SQL: "INSERT INTO t VALUES (?, ?)", Params: []ParamGen{{Kind: ParamSequence, Min: 1000}, {Kind: ParamString, MinLen: 3, MaxLen: 6}}},
	}
	return c
}

// Statements are chosen by weight (3:1, and never the zero-weight one), and
// every parameter stays within its generator's range.
func TestStatementMixAndParams(t *testing.T) {
	g, err := New(stmtConfig(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if ops := g.Config().Ops(); len(ops) != 2 || ops[0] != NumOpTypes || ops[1] != NumOpTypes+1 {
		t.Fatalf("Ops() = %v, want the two weighted statements", ops)
	}
	op := g.NewOp()
	const n = 40000
	counts := map[int]int{}
	zipf := make([]int, 10)
	for i := 0; i < n; i++ {
		g.Next(op)
		si := StatementOf(op.Type)
		counts[si]++
		switch si {
		case 0:
			p := op.Params[0]
			v, err := strconv.Atoi(string(p.Str[2:]))
			if !p.IsStr || string(p.Str[:2]) != "UN" || err != nil || v < 1 || v > 100 || int64(v) != p.Int {
				t.Fatalf("simple param %q (%d) out of range", p.Str, p.Int)
			}
		case 1:
			if s := string(op.Params[0].Str); s != "ARTS" && s != "HISTORY" && s != "TRAVEL" {
				t.Fatalf("choice %q not from the list", s)
			}
			z := op.Params[1]
			if z.IsStr || z.Int < 10 || z.Int > 19 {
				t.Fatalf("zipfian param %d out of [10, 19]", z.Int)
			}
			zipf[z.Int-10]++
		default:
			t.Fatalf("statement %d has weight 0 and must never be chosen", si)
		}
	}
	if f := float64(counts[0]) / n; math.Abs(f-0.75) > 0.015 {
		t.Errorf("simple share %.3f, want 0.75", f)
	}
	// Zipfian: the minimum is the most popular value, and popularity falls.
	if zipf[0] <= zipf[1] || zipf[1] <= zipf[9] {
		t.Errorf("zipfian counts %v do not fall from the minimum", zipf)
	}
}

// Sequence parameters are shared by forks: concurrent clients never repeat
// a value. Text lengths stay in range.
func TestSequenceSharedAcrossForks(t *testing.T) {
	c := stmtConfig()
	c.Statements[0].Weight, c.Statements[1].Weight, c.Statements[2].Weight = 0, 0, 1
	g, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, b := g.Fork(1), g.Fork(2)
	opA, opB := a.NewOp(), b.NewOp()
	seen := map[int64]bool{}
	for i := 0; i < 100; i++ {
		for _, x := range []struct {
			g  *Generator
			op *Op
		}{{a, opA}, {b, opB}} {
			x.g.Next(x.op)
			v := x.op.Params[0].Int
			if seen[v] || v < 1000 || v >= 1200 {
				t.Fatalf("sequence value %d repeated or out of [1000, 1200)", v)
			}
			seen[v] = true
			if l := len(x.op.Params[1].Str); l < 3 || l > 6 {
				t.Fatalf("string length %d out of [3, 6]", l)
			}
		}
	}
}

// Same seed, same statements and parameters; Next allocates nothing once
// the op's buffers have grown.
func TestStatementsReproducibleAndAllocationFree(t *testing.T) {
	seq := func() []string {
		g, _ := New(stmtConfig(), 99)
		op := g.NewOp()
		var out []string
		for i := 0; i < 50; i++ {
			g.Next(op)
			s := op.Type.String()
			for _, p := range op.Params {
				s += "|" + string(p.Str) + strconv.FormatInt(p.Int, 10)
			}
			out = append(out, s)
		}
		return out
	}
	a, b := seq(), seq()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs: %q vs %q", i, a[i], b[i])
		}
	}
	g, _ := New(stmtConfig(), 3)
	op := g.NewOp()
	for i := 0; i < 100; i++ {
		g.Next(op)
	}
	if allocs := testing.AllocsPerRun(1000, func() { g.Next(op) }); allocs != 0 {
		t.Errorf("Next allocates %.1f times per statement", allocs)
	}
}

// Generated table columns depend only on seed, column and row.
func TestColumnDrawerDeterministic(t *testing.T) {
	gen := ParamGen{Kind: ParamString, MinLen: 4, MaxLen: 12}
	d1, d2 := NewColumnDrawer(gen, 5, 2), NewColumnDrawer(gen, 5, 2)
	other := NewColumnDrawer(gen, 5, 3)
	same := 0
	for _, i := range []int64{9, 0, 3, 9} {
		a, b := d1.Draw(i, nil), d2.Draw(i, nil)
		if string(a.Str) != string(b.Str) {
			t.Fatalf("row %d: %q vs %q", i, a.Str, b.Str)
		}
		if string(other.Draw(i, nil).Str) == string(a.Str) {
			same++
		}
	}
	if same == 4 {
		t.Error("another column draws the same values")
	}
	seq := NewColumnDrawer(ParamGen{Kind: ParamSequence, Min: 1, Prefix: "UN"}, 5, 0)
	if p := seq.Draw(41, nil); string(p.Str) != "UN42" || p.Int != 42 {
		t.Errorf("sequence row 41 = %q/%d, want UN42", p.Str, p.Int)
	}
}

func TestPlaceholders(t *testing.T) {
	for q, want := range map[string]int{
		"SELECT ?":                          1,
		"SELECT '?', \"?\", `?` FROM t":     0,
		"SELECT 1 -- ?\n, ? /* ? */":        1,
		"SELECT 'it''s ?' , ?":              1,
		"INSERT INTO t VALUES (?, ?, ?, ?)": 4,
	} {
		if got := CountPlaceholders(q); got != want {
			t.Errorf("CountPlaceholders(%q) = %d, want %d", q, got, want)
		}
	}
}

func TestStatementConfigValidate(t *testing.T) {
	c := stmtConfig()
	c.Statements[0].Params = nil
	if err := c.Validate(); err == nil {
		t.Error("a placeholder without a param must be refused")
	}
	c = stmtConfig()
	c.Statements[1].Params[1] = ParamGen{Kind: "gaussian"}
	if err := c.Validate(); err == nil {
		t.Error("an unknown generator must be refused")
	}
}

// A later run continues the sequences where an earlier one stopped.
func TestContinueSequences(t *testing.T) {
	c := stmtConfig()
	c.Statements[0].Weight, c.Statements[1].Weight, c.Statements[2].Weight = 0, 0, 1
	g, _ := New(c, 1)
	op := g.NewOp()
	for i := 0; i < 10; i++ {
		g.Next(op)
	}
	if got := g.Sequences(); len(got) != 1 || got[0] != 1010 {
		t.Fatalf("Sequences() = %v, want [1010]", got)
	}
	h, _ := New(c, 2)
	h.ContinueSequences(g.Sequences())
	op2 := h.NewOp()
	h.Next(op2)
	if v := op2.Params[0].Int; v != 1010 {
		t.Errorf("continued sequence starts at %d, want 1010", v)
	}
	h.ContinueSequences([]int64{5}) // never moves backwards
	h.Next(op2)
	if v := op2.Params[0].Int; v != 1011 {
		t.Errorf("sequence went to %d after a lower ContinueSequences, want 1011", v)
	}
}

// "latest" never reads a record whose insert stored nothing (dropped or
// failed), even when every one of the newest inserts is such a hole.
func TestLatestSkipsMissingInserts(t *testing.T) {
	c, _ := Preset("d")
	c.RecordCount = 100
	g, err := New(c, 4)
	if err != nil {
		t.Fatal(err)
	}
	ins := g.NewOp()
	missing := map[uint64]bool{}
	for i := 0; i < 300; i++ {
		for ins.Type != Insert {
			g.Next(ins)
		}
		if i%3 != 0 || i > 250 { // the last 50 inserts all fail
			g.AcknowledgeMissing(ins.KeyNum)
			missing[ins.KeyNum] = true
		} else {
			g.Acknowledge(ins.KeyNum)
		}
		ins.Type = Read
	}
	op := g.NewOp()
	reads := 0
	for i := 0; i < 20000; i++ {
		g.Next(op)
		if op.Type != Read {
			continue
		}
		reads++
		if missing[op.KeyNum] {
			t.Fatalf("read key %d, whose insert stored nothing", op.KeyNum)
		}
	}
	if reads < 15000 {
		t.Fatalf("only %d reads drawn", reads)
	}
}

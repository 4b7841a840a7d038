package workload

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// MaxOps bounds the distinct operations of one workload: the five YCSB types,
// or up to MaxOps-NumOpTypes named statements. The engine keeps one set of
// statistics per operation in fixed arrays of this size.
const MaxOps = 32

// MaxStatements is the most statements a statement workload may have.
const MaxStatements = MaxOps - int(NumOpTypes)

// Statement is one weighted, parameterized SQL statement of a statement
// workload (the profiling study's benchmark statements, 001 §II-E). Its SQL
// uses ? placeholders; targets rewrite them to their own syntax.
type Statement struct {
	Name   string
	Weight float64
	SQL    string
	Params []ParamGen
}

// Param generator kinds.
const (
	ParamUniform  = "uniform"  // integer uniform in [Min, Max]
	ParamZipfian  = "zipfian"  // integer in [Min, Max], Min most popular (theta ZipfianConstant)
	ParamChoice   = "choice"   // one of Choices, uniformly
	ParamString   = "string"   // random letters and digits, length in [MinLen, MaxLen]
	ParamSequence = "sequence" // Min, Min+1, ... shared by every client of a run
)

// ParamGen describes how one statement parameter is drawn.
type ParamGen struct {
	Kind     string
	Min, Max int64    // uniform, zipfian, sequence (Min = first value)
	Choices  []string // choice
	MinLen   int      // string
	MaxLen   int      // string
	// Prefix, when set on a numeric kind, makes the parameter text: the
	// prefix followed by the decimal number (e.g. "UN" + 42 = "UN42").
	Prefix string
}

// Param is one drawn parameter value: an integer, or text in Str when IsStr.
// Str points into a buffer owned by the Op.
type Param struct {
	Int   int64
	Str   []byte
	IsStr bool
}

// Dataset is the schema and population of a statement workload. Exactly one
// of Builtin, SchemaFile or Tables describes the schema source: a built-in
// generated data set (e.g. "tpcw"), an SQL script, or generated tables on
// top of a script. internal/sqlwork executes it.
type Dataset struct {
	Builtin      string           // "tpcw" or ""
	Scale        map[string]int64 // builtin scale parameters (tpcw: items, ebs)
	SchemaFile   string           // SQL script of CREATE statements (absolute path)
	PopulateFile string           // SQL script of INSERT statements (absolute path), optional
	Tables       []TableGen       // generated rows for tables the schema script creates
}

// TableGen fills one table with generated rows.
type TableGen struct {
	Name    string
	Rows    int64
	Columns []ColumnGen // in insert order
}

// ColumnGen names one column and how its value is drawn.
type ColumnGen struct {
	Name string
	Gen  ParamGen
}

// IsStatements reports whether c is a statement workload.
func (c Config) IsStatements() bool { return len(c.Statements) > 0 }

// OpName names operation t of this workload: a YCSB type name, or the
// statement's name for t >= NumOpTypes.
func (c Config) OpName(t OpType) string {
	if t >= NumOpTypes {
		if i := int(t - NumOpTypes); i < len(c.Statements) {
			return c.Statements[i].Name
		}
		return "statement_" + strconv.Itoa(int(t-NumOpTypes))
	}
	return t.String()
}

// Ops lists the operations this workload issues: the YCSB types with a
// positive weight, or every statement.
func (c Config) Ops() []OpType {
	var ops []OpType
	if c.IsStatements() {
		for i, s := range c.Statements {
			if s.Weight > 0 {
				ops = append(ops, NumOpTypes+OpType(i))
			}
		}
		return ops
	}
	for t, w := range c.Mix {
		if w > 0 {
			ops = append(ops, OpType(t))
		}
	}
	return ops
}

// StatementOf returns the statement index of a statement operation type, or
// -1 for a YCSB type.
func StatementOf(t OpType) int {
	if t < NumOpTypes {
		return -1
	}
	return int(t - NumOpTypes)
}

// validateStatements checks a statement workload.
func (c Config) validateStatements() error {
	if len(c.Statements) > MaxStatements {
		return fmt.Errorf("workload: statements: at most %d statements, got %d", MaxStatements, len(c.Statements))
	}
	seen := map[string]bool{}
	var total float64
	for i, s := range c.Statements {
		where := fmt.Sprintf("workload: statements[%d]", i)
		if s.Name == "" {
			return fmt.Errorf("%s.name: required; name the statement, e.g. name: simple_join", where)
		}
		if seen[s.Name] {
			return fmt.Errorf("%s.name: %q is used twice; statement names must be unique", where, s.Name)
		}
		seen[s.Name] = true
		if s.SQL == "" {
			return fmt.Errorf("%s.sql: required", where)
		}
		if !(s.Weight >= 0) {
			return fmt.Errorf("%s.weight: must be 0 or more, got %v", where, s.Weight)
		}
		total += s.Weight
		if n := CountPlaceholders(s.SQL); n != len(s.Params) {
			return fmt.Errorf("%s: the SQL has %d ? placeholders but %d params are given; give one param per placeholder", where, n, len(s.Params))
		}
		for j, p := range s.Params {
			if err := p.Validate(); err != nil {
				return fmt.Errorf("%s.params[%d]: %v", where, j, err)
			}
		}
	}
	if total <= 0 {
		return fmt.Errorf("workload: statements: at least one statement needs a weight above 0")
	}
	return nil
}

// Validate checks one parameter generator.
func (p ParamGen) Validate() error {
	switch p.Kind {
	case ParamUniform, ParamZipfian:
		if p.Min > p.Max {
			return fmt.Errorf("%s: min %d is above max %d", p.Kind, p.Min, p.Max)
		}
	case ParamSequence:
	case ParamChoice:
		if len(p.Choices) == 0 {
			return fmt.Errorf("choice: give at least one value")
		}
		if p.Prefix != "" {
			return fmt.Errorf("prefix: only numeric generators take a prefix")
		}
	case ParamString:
		if p.MinLen < 0 || p.MaxLen < p.MinLen || p.MaxLen == 0 {
			return fmt.Errorf("string: length must be a positive number or a [min, max] range with 0 <= min <= max, got [%d, %d]", p.MinLen, p.MaxLen)
		}
		if p.MaxLen > 1<<20 {
			return fmt.Errorf("string: length %d is above the limit of 1 MiB", p.MaxLen)
		}
		if p.Prefix != "" {
			return fmt.Errorf("prefix: only numeric generators take a prefix")
		}
	default:
		return fmt.Errorf("unknown generator %q; use one of uniform, zipfian, choice, string, sequence", p.Kind)
	}
	return nil
}

// CountPlaceholders counts ? placeholders outside quoted strings, quoted
// identifiers and comments.
func CountPlaceholders(sql string) int {
	n := 0
	ScanPlaceholders(sql, func(int) { n++ })
	return n
}

// ScanPlaceholders calls f with the byte offset of every ? placeholder of
// sql that is outside '...', "...", `...` and -- or /* */ comments.
func ScanPlaceholders(sql string, f func(pos int)) {
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; c {
		case '\'', '"', '`':
			for i++; i < len(sql) && sql[i] != c; i++ {
				if sql[i] == '\\' && c != '"' {
					i++
				}
			}
		case '-':
			if i+1 < len(sql) && sql[i+1] == '-' {
				for i < len(sql) && sql[i] != '\n' {
					i++
				}
			}
		case '/':
			if i+1 < len(sql) && sql[i+1] == '*' {
				for i += 2; i+1 < len(sql) && !(sql[i] == '*' && sql[i+1] == '/'); i++ {
				}
				i++
			}
		case '?':
			f(i)
		}
	}
}

// paramState is the per-plan state of a statement's parameter generators.
type paramState struct {
	gen  ParamGen
	zipf zipfian // zipfian over Max-Min+1 values
	seq  *seqCounter
}

type seqCounter struct {
	n atomic.Int64
	_ [56]byte
}

// stmtPlan is the prepared form of the statements, shared by forks.
type stmtPlan struct {
	cum    []float64 // cumulative weights, normalised to 1
	params [][]paramState
	maxLen int // longest text parameter, for Op buffers
}

func newStmtPlan(c Config) *stmtPlan {
	sp := &stmtPlan{}
	var total float64
	for _, s := range c.Statements {
		total += s.Weight
	}
	var acc float64
	theta := c.ZipfianConstant
	if theta <= 0 || theta >= 1 {
		theta = 0.99
	}
	var zt *zetaTable
	for _, s := range c.Statements {
		acc += s.Weight / total
		sp.cum = append(sp.cum, acc)
		var ps []paramState
		for _, p := range s.Params {
			st := paramState{gen: p}
			switch p.Kind {
			case ParamZipfian:
				if zt == nil {
					zt = newZetaTable(theta)
				}
				n := uint64(p.Max-p.Min) + 1
				st.zipf = newZipfian(n, theta, zt.zeta(n))
			case ParamSequence:
				st.seq = new(seqCounter)
				st.seq.n.Store(p.Min)
			}
			sp.maxLen = max(sp.maxLen, paramTextLen(p))
			ps = append(ps, st)
		}
		sp.params = append(sp.params, ps)
	}
	sp.cum[len(sp.cum)-1] = 2 // above any u, whatever the rounding
	return sp
}

// paramTextLen is the longest text a parameter can produce.
func paramTextLen(p ParamGen) int {
	switch p.Kind {
	case ParamString:
		return p.MaxLen
	case ParamChoice:
		m := 0
		for _, s := range p.Choices {
			m = max(m, len(s))
		}
		return m
	}
	if p.Prefix != "" {
		return len(p.Prefix) + 20
	}
	return 0
}

// nextStatement fills op with a statement and its parameters.
func (g *Generator) nextStatement(op *Op) {
	sp := g.stmts
	i := 0
	if len(sp.cum) > 1 {
		u := g.r.float()
		for u >= sp.cum[i] {
			i++
		}
	}
	op.Type = NumOpTypes + OpType(i)
	op.KeyNum, op.Key, op.Field, op.ScanLength = 0, op.Key[:0], -1, 0
	ps := sp.params[i]
	if cap(op.Params) < len(ps) {
		op.Params = make([]Param, len(ps))
		op.paramBuf = make([][]byte, len(ps))
	}
	op.Params = op.Params[:len(ps)]
	for j := range ps {
		if cap(op.paramBuf[j]) < sp.maxLen {
			op.paramBuf[j] = make([]byte, 0, sp.maxLen)
		}
		drawParam(&ps[j], &op.Params[j], op.paramBuf[j][:0], &g.r)
	}
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// drawParam draws one value of st into p, using buf for text.
func drawParam(st *paramState, p *Param, buf []byte, r *rng) {
	g := &st.gen
	var v int64
	switch g.Kind {
	case ParamUniform:
		v = g.Min + int64(r.below(uint64(g.Max-g.Min)+1))
	case ParamZipfian:
		v = g.Min + int64(st.zipf.rank(r.float()))
	case ParamSequence:
		v = st.seq.n.Add(1) - 1
	case ParamChoice:
		s := g.Choices[r.below(uint64(len(g.Choices)))]
		*p = Param{Str: append(buf, s...), IsStr: true}
		return
	case ParamString:
		n := g.MinLen + int(r.below(uint64(g.MaxLen-g.MinLen)+1))
		for k := 0; k < n; k++ {
			buf = append(buf, alnum[r.below(uint64(len(alnum)))])
		}
		*p = Param{Str: buf, IsStr: true}
		return
	}
	if g.Prefix != "" {
		buf = append(buf, g.Prefix...)
		*p = Param{Int: v, Str: strconv.AppendInt(buf, v, 10), IsStr: true}
		return
	}
	*p = Param{Int: v}
}

// ColumnDrawer draws the values of one generated column.
type ColumnDrawer struct {
	st   paramState
	seed uint64
}

// NewColumnDrawer prepares generator g for column number column of a
// generated table.
func NewColumnDrawer(g ParamGen, seed uint64, column int) *ColumnDrawer {
	d := &ColumnDrawer{st: paramState{gen: g}, seed: mix64(seed ^ uint64(column+1)*0x9e3779b97f4a7c15)}
	if g.Kind == ParamZipfian {
		n := uint64(g.Max-g.Min) + 1
		d.st.zipf = newZipfian(n, 0.99, newZetaTable(0.99).zeta(n))
	}
	return d
}

// Draw returns the value of row i (0-based): a function of the seed, the
// column and i only, so rows can be generated in any order. Sequence
// columns give Min+i. Text is appended to buf[:0].
func (d *ColumnDrawer) Draw(i int64, buf []byte) Param {
	g := &d.st.gen
	if g.Kind == ParamSequence {
		if g.Prefix != "" {
			return Param{Int: g.Min + i, Str: strconv.AppendInt(append(buf[:0], g.Prefix...), g.Min+i, 10), IsStr: true}
		}
		return Param{Int: g.Min + i}
	}
	r := newRNG(d.seed ^ mix64(uint64(i)))
	var p Param
	drawParam(&d.st, &p, buf[:0], &r)
	return p
}

// Sequences returns the next value of every sequence parameter, in order of
// statements and parameters (nil when there are none). The campaign stores
// them so that the next run, and a resumed campaign, continue the sequences
// instead of repeating values an earlier run inserted.
func (g *Generator) Sequences() []int64 {
	if g.stmts == nil {
		return nil
	}
	var out []int64
	for _, ps := range g.stmts.params {
		for _, p := range ps {
			if p.seq != nil {
				out = append(out, p.seq.n.Load())
			}
		}
	}
	return out
}

// ContinueSequences moves every sequence parameter to at least the value
// given for it (as returned by Sequences of an earlier generator of the
// same workload). Extra or missing values are ignored.
func (g *Generator) ContinueSequences(next []int64) {
	if g.stmts == nil {
		return
	}
	i := 0
	for _, ps := range g.stmts.params {
		for _, p := range ps {
			if p.seq == nil {
				continue
			}
			if i < len(next) && next[i] > p.seq.n.Load() {
				p.seq.n.Store(next[i])
			}
			i++
		}
	}
}

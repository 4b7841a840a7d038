package spec

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/headroom-dev/headroom/internal/workload"
)

// statements checks a statement workload: names, SQL, one param per
// placeholder, and the dataset that creates its tables.
func (c *checker) statements(w *Workload) {
	if len(w.Statements) == 0 {
		if w.Dataset != nil {
			c.fail("workload.dataset", "a dataset only makes sense with statements; add workload.statements or remove the dataset")
		}
		return
	}
	if w.YCSB != "" || len(w.Operations) > 0 {
		c.fail("workload.statements", "a workload is either YCSB records (ycsb, operations) or SQL statements, not both; remove one")
	}
	if len(w.Statements) > workload.MaxStatements {
		c.fail("workload.statements", "at most %d statements, got %d", workload.MaxStatements, len(w.Statements))
	}
	seen := map[string]bool{}
	total := 0.0
	for i, s := range w.Statements {
		p := fmt.Sprintf("workload.statements[%d]", i)
		switch {
		case s.Name == "":
			c.fail(p+".name", "required; name the statement, e.g. name: simple_join")
		case seen[s.Name]:
			c.fail(p+".name", "%q is used twice; statement names must be unique", s.Name)
		case !nameRE.MatchString(s.Name):
			c.fail(p+".name", "use letters, digits, '_', '-' and '.' only, got %q", truncate(s.Name, 40))
		case s.Name == "all":
			c.fail(p+".name", "\"all\" names every operation together in reports; pick another name")
		default:
			if _, ok := workload.ParseOpType(s.Name); ok {
				c.fail(p+".name", "%q is a YCSB operation name; pick another so reports can tell them apart", s.Name)
			}
		}
		seen[s.Name] = true
		if strings.TrimSpace(s.SQL) == "" {
			c.fail(p+".sql", "required; the statement text with ? for each parameter")
		} else if n := workload.CountPlaceholders(s.SQL); n != len(s.Params) {
			c.fail(p+".params", "the SQL has %d ? placeholder(s) but %d param(s) are given; give one param per ?", n, len(s.Params))
		}
		wt := 1.0
		if s.Weight != nil {
			wt = *s.Weight
		}
		if !(wt >= 0) {
			c.fail(p+".weight", "must be 0 or more, got %g", wt)
		} else {
			total += wt
		}
		for j, ps := range s.Params {
			pp := fmt.Sprintf("%s.params[%d]", p, j)
			if ps.Name != "" {
				c.fail(pp+".name", "statement params have no name (only generated table columns do); remove it")
			}
			if _, err := ps.gen(); err != nil {
				c.fail(pp, "%v", err)
			}
		}
	}
	if total <= 0 {
		c.fail("workload.statements", "every weight is 0; give at least one statement a positive weight")
	}
	c.dataset(w.Dataset)
}

func (c *checker) dataset(d *DatasetSpec) {
	if d == nil {
		c.fail("workload.dataset", "required with statements; add dataset: {builtin: tpcw} or dataset: {schema: schema.sql, populate: data.sql}")
		return
	}
	switch {
	case d.Builtin != "" && (d.Schema != "" || d.Populate != "" || len(d.Tables) > 0):
		c.fail("workload.dataset", "builtin replaces schema, populate and tables; use either builtin or your own schema")
	case d.Builtin != "":
		if d.Builtin != "tpcw" {
			c.fail("workload.dataset.builtin", "unknown data set %q; the built-in one is tpcw", truncate(d.Builtin, 40))
		}
		for k, v := range d.Scale {
			if k != "items" && k != "ebs" {
				c.fail("workload.dataset.scale."+k, "unknown tpcw scale parameter; use items (NUM_ITEMS) or ebs (NUM_EBS)")
			} else if v < 1 {
				c.fail("workload.dataset.scale."+k, "must be at least 1, got %d", v)
			}
		}
	case d.Schema == "":
		c.fail("workload.dataset.schema", "required unless builtin is set; name an SQL file of CREATE TABLE statements")
	default:
		if len(d.Scale) > 0 {
			c.fail("workload.dataset.scale", "scale only applies to a builtin data set; remove it")
		}
	}
	for i, t := range d.Tables {
		p := fmt.Sprintf("workload.dataset.tables[%d]", i)
		if t.Name == "" {
			c.fail(p+".name", "required; the table to fill")
		}
		if t.Rows < 1 {
			c.fail(p+".rows", "must be at least 1, got %d", t.Rows)
		}
		if len(t.Columns) == 0 {
			c.fail(p+".columns", "give at least one column: {name: id, sequence: 1}")
		}
		for j, col := range t.Columns {
			cp := fmt.Sprintf("%s.columns[%d]", p, j)
			if col.Name == "" {
				c.fail(cp+".name", "required; the column to fill")
			}
			if _, err := col.gen(); err != nil {
				c.fail(cp, "%v", err)
			}
		}
	}
}

// gen converts a param spec to its generator.
func (p ParamSpec) gen() (workload.ParamGen, error) {
	var g workload.ParamGen
	n := 0
	if p.Uniform != nil {
		n++
		g.Kind = workload.ParamUniform
	}
	if p.Zipfian != nil {
		n++
		g.Kind = workload.ParamZipfian
	}
	if p.Choice != nil {
		n++
		g.Kind, g.Choices = workload.ParamChoice, p.Choice
	}
	if p.String != nil {
		n++
		g.Kind = workload.ParamString
	}
	if p.Sequence != nil {
		n++
		g.Kind, g.Min = workload.ParamSequence, *p.Sequence
	}
	if n != 1 {
		return g, fmt.Errorf("give exactly one generator: uniform: [min, max], zipfian: [min, max], choice: [a, b], string: [length] or [min, max], or sequence: first")
	}
	bounds := func(name string, v []int64) error {
		if len(v) != 2 {
			return fmt.Errorf("%s: give [min, max], got %d value(s)", name, len(v))
		}
		g.Min, g.Max = v[0], v[1]
		return nil
	}
	switch g.Kind {
	case workload.ParamUniform:
		if err := bounds("uniform", p.Uniform); err != nil {
			return g, err
		}
	case workload.ParamZipfian:
		if err := bounds("zipfian", p.Zipfian); err != nil {
			return g, err
		}
	case workload.ParamString:
		switch len(p.String) {
		case 1:
			g.MinLen, g.MaxLen = p.String[0], p.String[0]
		case 2:
			g.MinLen, g.MaxLen = p.String[0], p.String[1]
		default:
			return g, fmt.Errorf("string: give [length] or [min, max]")
		}
	}
	g.Prefix = p.Prefix
	return g, g.Validate()
}

// StatementWorkload converts the statements and dataset of w into the
// generator's form; script paths are made absolute against specDir. It
// assumes a validated spec.
func (w Workload) StatementWorkload(specDir string) ([]workload.Statement, workload.Dataset, error) {
	var out []workload.Statement
	for _, s := range w.Statements {
		st := workload.Statement{Name: s.Name, Weight: 1, SQL: s.SQL}
		if s.Weight != nil {
			st.Weight = *s.Weight
		}
		for _, p := range s.Params {
			g, err := p.gen()
			if err != nil {
				return nil, workload.Dataset{}, fmt.Errorf("workload.statements: %s: %w", s.Name, err)
			}
			st.Params = append(st.Params, g)
		}
		out = append(out, st)
	}
	var ds workload.Dataset
	if d := w.Dataset; d != nil {
		abs := func(p string) string {
			if p == "" || filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(specDir, p)
		}
		ds = workload.Dataset{Builtin: d.Builtin, Scale: d.Scale, SchemaFile: abs(d.Schema), PopulateFile: abs(d.Populate)}
		for _, t := range d.Tables {
			tg := workload.TableGen{Name: t.Name, Rows: t.Rows}
			for _, col := range t.Columns {
				g, err := col.gen()
				if err != nil {
					return nil, ds, fmt.Errorf("workload.dataset.tables: %s.%s: %w", t.Name, col.Name, err)
				}
				tg.Columns = append(tg.Columns, workload.ColumnGen{Name: col.Name, Gen: g})
			}
			ds.Tables = append(ds.Tables, tg)
		}
	}
	return out, ds, nil
}

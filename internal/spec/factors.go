package spec

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Factor is one decision variable of a factorial experiment (`factors:` in
// the spec; seed 002 Table II, seed 003's generated experiments): a field
// path, as in treatments[].set, and the values it takes. The factors
// expand into one treatment per combination of their values.
type Factor struct {
	Name   string   // short name in treatment names: name:, or the path's last field name
	Path   string   // field path, e.g. lab.hosts[0].type
	Values []string // the values as written (YAML text)
	Labels []string // how each value appears in treatment names: labels:, or the value made name-safe
	Line   int      // of the factor's entry

	nodes []*yaml.Node // the values, to set into copies of the spec
}

// maxTreatments bounds a factorial expansion: a campaign with more
// treatments than this would not finish on any machine worth planning for.
const maxTreatments = 1000

// parseFactors reads the factors: list. Each entry is
// {path: PATH, values: [V1, V2, ...]} with an optional short name: for the
// treatment names and optional labels: (one per value) for values whose
// text does not make a readable name, such as lists.
func parseFactors(file string, n *yaml.Node) ([]Factor, Errors) {
	var errs Errors
	fail := func(line int, path, format string, args ...any) {
		add(&errs, &Error{File: file, Line: line, Path: path, Msg: oneLine(fmt.Sprintf(format, args...))})
	}
	n = resolve(n)
	if n == nil || isNull(n) || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		line := 0
		if n != nil {
			line = n.Line
		}
		fail(line, "factors", "expected a list like [{path: lab.hosts[0].type, values: [small, large]}, {path: workload.ycsb, values: [a, b]}]")
		return nil, errs
	}
	var out []Factor
	byPath, byName := map[string]int{}, map[string]int{}
	count := 1
	for i, item := range n.Content {
		p := fmt.Sprintf("factors[%d]", i)
		line := item.Line
		item = resolve(item)
		if item == nil || item.Kind != yaml.MappingNode {
			fail(line, p, "expected a mapping like {path: lab.hosts[0].type, values: [small, large]}")
			continue
		}
		f := Factor{Line: line}
		var labels *yaml.Node
		labelsLine, nameLine := line, line
		ok := true
		for k := 0; k+1 < len(item.Content); k += 2 {
			key, kl, val := item.Content[k].Value, item.Content[k].Line, resolve(item.Content[k+1])
			if val == nil {
				fail(kl, p+"."+key, "the alias cannot be resolved; write the value out")
				ok = false
				continue
			}
			switch key {
			case "path":
				f.Path = val.Value
			case "name":
				f.Name, nameLine = val.Value, kl
				if !validName(f.Name) {
					fail(kl, p+".name", "%q is not a short name; use letters, digits, '.', '_' or '-' (it is part of the treatment names)", truncate(f.Name, 40))
					ok = false
				}
			case "values":
				if val == nil || val.Kind != yaml.SequenceNode || len(val.Content) == 0 {
					fail(kl, p+".values", "expected a list of the values the field takes, like [small, large]")
					ok = false
					continue
				}
				for _, v := range val.Content {
					f.nodes = append(f.nodes, v)
					f.Values = append(f.Values, nodeText(v))
				}
			case "labels":
				labels, labelsLine = val, kl
			default:
				fail(kl, p+"."+key, "unknown field; a factor has path, values and optionally name and labels")
				ok = false
			}
		}
		if f.Path == "" {
			fail(line, p+".path", "required: the field the factor changes, like lab.hosts[0].type (as in treatments[].set)")
			continue
		}
		segs, err := splitPath(f.Path)
		if err != nil {
			fail(line, p+".path", "%s: %v", f.Path, err)
			continue
		}
		if j, dup := byPath[f.Path]; dup {
			fail(line, p+".path", "%s is already factors[%d]; list its values there once", f.Path, j)
			continue
		}
		byPath[f.Path] = i
		if f.nodes == nil {
			if ok {
				fail(line, p+".values", "required: the values %s takes, like [small, large]", f.Path)
			}
			continue
		}
		if f.Name == "" {
			f.Name = nameOf(segs)
			if !validName(f.Name) {
				fail(line, p+".name", "required here: the last field of %s does not make a short name; add name: with letters, digits, '.', '_' or '-'", f.Path)
				continue
			}
		}
		if j, dup := byName[f.Name]; dup {
			fail(nameLine, p+".name", "%q already names factors[%d]; give one of them its own name:", f.Name, j)
			continue
		}
		byName[f.Name] = i
		if !ok || !f.label(file, p, labels, labelsLine, fail) {
			continue
		}
		// Saturate above the limit: 64 factors of 2 values overflow an int,
		// and a wrapped count would pass the check below.
		count = min(count*len(f.Values), maxTreatments+1)
		out = append(out, f)
	}
	if count > maxTreatments {
		fail(n.Line, "factors", "the factors make more than %d combinations; use fewer factors or values", maxTreatments)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// label fills f.Labels from labels: (or the values) and checks that they
// tell the values apart.
func (f *Factor) label(file, p string, labels *yaml.Node, line int, fail func(int, string, string, ...any)) bool {
	if labels != nil {
		if labels.Kind != yaml.SequenceNode || len(labels.Content) != len(f.Values) {
			fail(line, p+".labels", "expected a list of %d short names, one per value", len(f.Values))
			return false
		}
		for j, l := range labels.Content {
			if !validName(l.Value) {
				fail(l.Line, fmt.Sprintf("%s.labels[%d]", p, j), "%q is not a short name; use letters, digits, '.', '_' or '-'", truncate(l.Value, 40))
				return false
			}
			f.Labels = append(f.Labels, l.Value)
		}
	} else {
		for _, v := range f.Values {
			f.Labels = append(f.Labels, nameSafe(v))
		}
	}
	seen := map[string]int{}
	for j, l := range f.Labels {
		if l == "" {
			fail(f.nodes[j].Line, fmt.Sprintf("%s.values[%d]", p, j), "the value %q makes no name for its treatments; give the factor labels: [...], one short name per value", truncate(f.Values[j], 40))
			return false
		}
		if k, dup := seen[l]; dup {
			fail(f.nodes[j].Line, fmt.Sprintf("%s.values[%d]", p, j), "makes the same treatment name (%s) as values[%d]; remove the repeated value or give the factor labels: [...]", truncate(l, 40), k)
			return false
		}
		seen[l] = j
	}
	return true
}

// nameOf is the last field name of a path (lab.hosts[0].type -> type).
func nameOf(segs []pathSeg) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].index < 0 {
			return segs[i].key
		}
	}
	return ""
}

// nameSafe keeps the characters a treatment name allows and turns every
// run of others into one '-' ("[30, 60]" -> "30-60").
func nameSafe(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// crossFactors makes one variant per variant in vs and combination of the
// factors' values, the last factor changing fastest (as nested loops). A
// combination is named NAME-LABEL for each factor, joined by '_'
// (type-small_iops-300), after the listed treatment's name when there is
// one (pg_type-small_iops-300).
func crossFactors(file string, vs []variant, fs []Factor) ([]variant, Errors) {
	var out []variant
	var errs Errors
	seenErr := map[string]bool{}
	fail := func(line int, path, msg string) {
		if !seenErr[msg] {
			seenErr[msg] = true
			errs = append(errs, &Error{File: file, Line: line, Path: path, Msg: msg})
		}
	}
	n := len(vs)
	for _, f := range fs {
		n *= len(f.Values)
	}
	if n > maxTreatments {
		return nil, Errors{{File: file, Line: fs[0].Line, Path: "factors", Msg: fmt.Sprintf("the treatments crossed with the factors make %d treatments, more than %d; use fewer values", n, maxTreatments)}}
	}
	names := map[string]bool{}
	for _, v := range vs {
		for j, f := range fs {
			for _, p := range v.set {
				if p == f.Path {
					fail(f.Line, fmt.Sprintf("factors[%d].path", j), fmt.Sprintf("%s is also set by treatment %s; set it in one place", f.Path, v.name))
				}
			}
		}
		idx := make([]int, len(fs))
		for {
			c := variant{node: deepCopy(v.node), set: append([]string(nil), v.set...), values: append([]string(nil), v.values...)}
			parts := make([]string, 0, len(fs)+1)
			if v.name != "" {
				parts = append(parts, v.name)
			}
			for j, f := range fs {
				if err := setPath(c.node, f.Path, f.nodes[idx[j]]); err != nil {
					fail(f.Line, fmt.Sprintf("factors[%d].path", j), fmt.Sprintf("%s: %v", f.Path, err))
				}
				c.set = append(c.set, f.Path)
				c.values = append(c.values, f.Values[idx[j]])
				parts = append(parts, f.Name+"-"+f.Labels[idx[j]])
			}
			c.name = strings.Join(parts, "_")
			switch {
			case !validName(c.name):
				fail(fs[0].Line, "factors", fmt.Sprintf("the treatment name %s is longer than 64 characters; give the factors shorter name: or labels:", c.name))
			case names[c.name]:
				fail(fs[0].Line, "factors", fmt.Sprintf("two treatments would be named %s; give the factors labels: that tell their values apart", c.name))
			}
			names[c.name] = true
			out = append(out, c)
			if !next(idx, fs) {
				break
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// next advances idx, an odometer over the factors' values with the last
// factor fastest; it reports false after the last combination.
func next(idx []int, fs []Factor) bool {
	for j := len(idx) - 1; j >= 0; j-- {
		idx[j]++
		if idx[j] < len(fs[j].Values) {
			return true
		}
		idx[j] = 0
	}
	return false
}

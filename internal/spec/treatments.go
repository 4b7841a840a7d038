package spec

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Treatment is one variant of a campaign: the base spec with some values
// changed (`treatments:` in the spec, or one combination of `factors:`).
// A campaign with treatments runs them in blocks (blocks.go), each block
// with its own target (and lab), and labels its runs with the treatment's
// name.
type Treatment struct {
	Name string
	Set  []string // the paths it changes, for the record
	// Values are the values Set's paths were given, as written (YAML
	// text), in the same order.
	Values []string
	Spec   *Spec // the whole campaign as this treatment runs it
}

// Fields a treatment may not change: they name the campaign as a whole, or
// say how its treatments are made and ordered.
var fixedPaths = []string{"name", "output", "treatments", "description", "factors", "treatment_order", "blocks", "budget"}

// variant is a treatment before it is checked as a spec: its name, the
// paths it sets with their values, and the document it runs.
type variant struct {
	name   string
	set    []string
	values []string
	node   *yaml.Node
}

// parseVariants makes the campaign's treatments from its treatments: list
// (tnode) and factors: list (fnode), either of which may be nil, and checks
// how they are ordered. base is the document without those two sections;
// s is the base spec (nil when it has errors), which receives Treatments
// and Factors.
func parseVariants(file string, root, base, tnode, fnode *yaml.Node, s *Spec) Errors {
	var vs []variant
	var errs Errors
	var fs []Factor
	var ferrs Errors
	if fnode != nil {
		fs, ferrs = parseFactors(file, fnode)
	}
	// Before any copy is made: each treatment decodes its own copy.
	if e := checkCopies(file, base, tnode, fnode, fs); e != nil {
		return Errors{e}
	}
	if tnode != nil {
		vs, errs = parseTreatments(file, base, tnode)
	}
	if fnode != nil {
		errs = append(errs, ferrs...)
		if s != nil {
			s.Factors = fs
		}
		switch {
		case len(ferrs) > 0:
			vs = nil // their names and settings would be wrong
		case len(vs) > 0 || len(errs) == 0:
			if len(vs) == 0 {
				vs = []variant{{node: base}}
			}
			var cerrs Errors
			vs, cerrs = crossFactors(file, vs, fs)
			errs = append(errs, cerrs...)
		}
	}
	ts, terrs := checkVariants(file, vs)
	errs = append(errs, terrs...)
	if s == nil {
		return errs
	}
	s.Treatments = ts
	if len(errs) == 0 {
		if err := checkTreatmentPlans(ts); err != nil {
			line := 0
			if tnode != nil {
				line = tnode.Line
			}
			errs = append(errs, &Error{File: file, Line: line, Path: "treatments", Msg: err.Error()})
		}
	}
	errs = append(errs, checkSweepBlocks(file, root, s)...) // sweep.go
	return append(errs, checkTreatmentOrder(file, root, s, len(ts) == 0 && len(errs) == 0)...)
}

// checkVariants checks every variant as a whole spec. An error that several
// variants share (a bad factor value is in many combinations) is reported
// once, naming the first treatment that has it.
func checkVariants(file string, vs []variant) ([]Treatment, Errors) {
	var out []Treatment
	var errs Errors
	seen := map[string]bool{}
	for _, v := range vs {
		ts, terrs := parseRoot(file, v.node)
		for _, e := range terrs {
			key := fmt.Sprintf("%d|%s|%s", e.Line, e.Path, e.Msg)
			if seen[key] {
				continue
			}
			seen[key] = true
			e.Msg = fmt.Sprintf("in treatment %s: %s", v.name, e.Msg)
			errs = append(errs, e)
		}
		if ts != nil {
			out = append(out, Treatment{Name: v.name, Set: v.set, Values: v.values, Spec: ts})
		}
	}
	return out, errs
}

// parseTreatments reads the treatments: sequence. Each entry is
// {name: NAME, set: {PATH: VALUE, ...}} where PATH is a field path like
// lab.hosts[0].volumes[0].iops or target.managed.settings["a.b"]; its
// value replaces (or adds) that field of a copy of base.
func parseTreatments(file string, base, n *yaml.Node) ([]variant, Errors) {
	fail := func(line int, path, format string, args ...any) Errors {
		return Errors{{File: file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)}}
	}
	n = resolve(n)
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, fail(n.Line, "treatments", "expected a list like [{name: small}, {name: large, set: {lab.hosts[0].type: large}}]")
	}
	if len(n.Content) > maxTreatments {
		return nil, fail(n.Line, "treatments", "%d treatments is more than the %d allowed; split the campaign", len(n.Content), maxTreatments)
	}
	var out []variant
	var errs Errors
	seen := map[string]bool{}
	for i, item := range n.Content {
		p := fmt.Sprintf("treatments[%d]", i)
		line := item.Line
		item = resolve(item)
		if item == nil || item.Kind != yaml.MappingNode {
			addAll(&errs, fail(line, p, "expected a mapping like {name: large, set: {lab.hosts[0].type: large}}"))
			continue
		}
		var name string
		var set *yaml.Node
		bad := false
		for k := 0; k+1 < len(item.Content); k += 2 {
			key, val := item.Content[k].Value, resolve(item.Content[k+1])
			switch key {
			case "name":
				name = val.Value
			case "set":
				set = val
			default:
				addAll(&errs, fail(item.Content[k].Line, p+"."+key, "unknown field; a treatment has name and set"))
				bad = true
			}
		}
		if !validName(name) {
			addAll(&errs, fail(item.Line, p+".name", "required: letters, digits, '.', '_' or '-' (it labels the treatment's runs)"))
			continue
		}
		if seen[name] {
			addAll(&errs, fail(item.Line, p+".name", "%q is used by an earlier treatment; give each its own name", name))
			continue
		}
		seen[name] = true
		if bad {
			continue
		}
		v := variant{name: name, node: deepCopy(base)}
		if set != nil && !isNull(set) {
			if set.Kind != yaml.MappingNode {
				addAll(&errs, fail(set.Line, p+".set", "expected a mapping of field paths to values, like {lab.hosts[0].type: large}"))
				continue
			}
			ok := true
			for k := 0; k+1 < len(set.Content); k += 2 {
				path := set.Content[k].Value
				if err := setPath(v.node, path, set.Content[k+1]); err != nil {
					addAll(&errs, fail(set.Content[k].Line, p+".set", "%s: %v", path, err))
					ok = false
				}
				v.set = append(v.set, path)
				v.values = append(v.values, nodeText(set.Content[k+1]))
			}
			if !ok {
				continue
			}
		}
		out = append(out, v)
	}
	return out, errs
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// checkTreatmentPlans keeps the runs of all treatments within the slot
// numbering (slots of treatment i start at i x SlotsPerTreatment).
func checkTreatmentPlans(ts []Treatment) error {
	for _, t := range ts {
		if n := t.Spec.runCount(); n > SlotsPerTreatment {
			return fmt.Errorf("treatment %s plans %d runs, more than %d; use fewer levels or repetitions", t.Name, n, SlotsPerTreatment)
		}
	}
	return nil
}

// SlotsPerTreatment separates the plan slots of treatments: treatment i's
// runs have slots i*SlotsPerTreatment + its own plan's slot.
const SlotsPerTreatment = 100000

// withoutKey returns a copy of mapping root without key, and key's value.
func withoutKey(root *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	c := *root
	c.Content = nil
	var val *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			val = root.Content[i+1]
			continue
		}
		c.Content = append(c.Content, root.Content[i], root.Content[i+1])
	}
	return &c, val
}

func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Alias != nil {
		c.Alias = deepCopy(n.Alias)
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}

// setPath replaces (or adds) the field at path in root with val.
func setPath(root *yaml.Node, path string, val *yaml.Node) error {
	segs, err := splitPath(path)
	if err != nil {
		return err
	}
	for _, f := range fixedPaths {
		if segs[0].key == f {
			return fmt.Errorf("%s names the whole campaign and is the same for every treatment", f)
		}
	}
	cur := root
	at := "the spec"
	for i, sg := range segs {
		last := i == len(segs)-1
		cur = resolve(cur)
		if i > 0 {
			at = segs[i-1].String()
		}
		if sg.index >= 0 {
			if cur.Kind != yaml.SequenceNode {
				return fmt.Errorf("[%d] indexes %s, which is not a list (it is %s)", sg.index, at, describe(cur))
			}
			if sg.index >= len(cur.Content) {
				return fmt.Errorf("the list has %d items, so [%d] does not exist", len(cur.Content), sg.index)
			}
			if last {
				cur.Content[sg.index] = deepCopy(val)
				return nil
			}
			cur = cur.Content[sg.index]
			continue
		}
		if cur.Kind != yaml.MappingNode {
			if isNull(cur) {
				// An empty section (managed: with nothing under it).
				cur.Kind, cur.Tag, cur.Value = yaml.MappingNode, "!!map", ""
			} else {
				return fmt.Errorf("%s is not a mapping (it is %s)", at, describe(cur))
			}
		}
		found := false
		for k := 0; k+1 < len(cur.Content); k += 2 {
			if cur.Content[k].Value == sg.key {
				found = true
				if last {
					cur.Content[k+1] = deepCopy(val)
					// Errors about the new value point at the set: line.
					cur.Content[k].Line = val.Line
					return nil
				}
				cur = cur.Content[k+1]
				break
			}
		}
		if !found {
			kn := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: sg.key, Line: val.Line, Column: val.Column}
			var vn *yaml.Node
			if last {
				vn = deepCopy(val)
			} else {
				vn = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: val.Line, Column: val.Column}
			}
			cur.Content = append(cur.Content, kn, vn)
			if last {
				return nil
			}
			cur = vn
		}
	}
	return nil
}

type pathSeg struct {
	key   string
	index int // -1 for a key
}

func (p pathSeg) String() string {
	if p.index >= 0 {
		return fmt.Sprintf("[%d]", p.index)
	}
	return p.key
}

// splitPath reads a.b[2].c["x.y"] into segments.
func splitPath(p string) ([]pathSeg, error) {
	var out []pathSeg
	rest := p
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, `["`):
			end := strings.Index(rest[2:], `"]`)
			if end < 0 {
				return nil, fmt.Errorf(`unclosed ["...] in the path`)
			}
			out = append(out, pathSeg{key: rest[2 : 2+end], index: -1})
			rest = rest[2+end+2:]
		case strings.HasPrefix(rest, "["):
			end := strings.Index(rest, "]")
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ in the path")
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("[%s] is not a list index", rest[1:end])
			}
			out = append(out, pathSeg{index: i})
			rest = rest[end+1:]
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, fmt.Errorf("empty field name in the path; write it like lab.hosts[0].type")
			}
			out = append(out, pathSeg{key: rest[:end], index: -1})
			rest = rest[end:]
		}
		rest = strings.TrimPrefix(rest, ".")
	}
	if len(out) == 0 || out[0].index >= 0 {
		return nil, fmt.Errorf("a path starts with a section name, like lab.hosts[0].type")
	}
	return out, nil
}

// nodeText is a value node as YAML text on one line (flow style).
func nodeText(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return ""
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	c := *n
	c.Style |= yaml.FlowStyle
	b, err := yaml.Marshal(&c)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

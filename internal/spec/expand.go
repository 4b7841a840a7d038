package spec

import (
	"fmt"
	"math"

	"go.yaml.in/yaml/v3"
)

// Bounds on a spec as its readers see it, with every alias replaced by the
// value it names. A 1 MiB file can name a 10 KB value hundreds of thousands
// of times (or nest aliases of aliases), and every step after parsing
// (decoding, copying the spec per treatment, printing values) works on
// that expansion. Like Kubernetes after CVE-2019-11253, Headroom measures
// the expansion before decoding and refuses a spec over these bounds; a
// real campaign is far below both (the examples have at most a few hundred
// values and a few KiB of text).
const (
	// maxExpandedBytes bounds the text of all scalars (keys and values)
	// once aliases are expanded.
	maxExpandedBytes = 8 << 20
	// maxExpandedNodes bounds the values (scalars, lists and mappings)
	// decoded in all: those of the spec with aliases expanded, and those of
	// the copy of the spec each treatment decodes.
	maxExpandedNodes = 500_000
)

// expansion is the size of a YAML value with its aliases expanded.
type expansion struct {
	nodes int64 // scalars, lists and mappings, keys included
	bytes int64 // text of the scalars
}

// plus adds two sizes, saturating far above any bound so that a nest of
// aliases cannot overflow the count.
func (e expansion) plus(o expansion) expansion {
	const ceiling = math.MaxInt64 / 4
	return expansion{min(e.nodes+o.nodes, ceiling), min(e.bytes+o.bytes, ceiling)}
}

func (e expansion) over() bool {
	return e.nodes > maxExpandedNodes || e.bytes > maxExpandedBytes
}

// sizer measures expansions in time and memory proportional to the nodes
// as parsed (not as expanded): each node's size is computed once and
// reused wherever an alias names it.
type sizer struct {
	sizes   map[*yaml.Node]expansion
	open    map[*yaml.Node]bool // being measured: an alias to one of them is a cycle
	aliases bool                // whether any alias was met
	cycle   *yaml.Node          // the first alias met that is inside the value it names
}

func newSizer() *sizer {
	return &sizer{sizes: map[*yaml.Node]expansion{}, open: map[*yaml.Node]bool{}}
}

func (z *sizer) size(n *yaml.Node) expansion {
	if n == nil {
		return expansion{}
	}
	if e, ok := z.sizes[n]; ok {
		return e
	}
	if z.open[n] {
		// The value contains an alias to itself: its expansion never ends.
		return expansion{math.MaxInt64 / 4, math.MaxInt64 / 4}
	}
	z.open[n] = true
	var e expansion
	switch n.Kind {
	case yaml.AliasNode:
		z.aliases = true
		if z.open[n.Alias] && z.cycle == nil {
			z.cycle = n
		}
		e = z.size(n.Alias)
	case yaml.ScalarNode:
		e = expansion{1, int64(len(n.Value))}
	default:
		e.nodes = 1
		for _, c := range n.Content {
			e = e.plus(z.size(c))
		}
	}
	delete(z.open, n)
	z.sizes[n] = e
	return e
}

// checkExpansion refuses a root mapping whose expansion is over the
// bounds, or that contains itself through an alias. The error names the
// top-level field that expands the most, where the fix is.
func checkExpansion(file string, root *yaml.Node) *Error {
	z := newSizer()
	total := z.size(root)
	if z.cycle != nil {
		key := topLevelField(z, root, z.cycle, false)
		return &Error{File: file, Line: z.cycle.Line, Path: key.Value,
			Msg: fmt.Sprintf("the alias *%s is inside the value it names, so the value would never end; write the value out", truncate(z.cycle.Value, 40))}
	}
	if !total.over() {
		return nil
	}
	key := topLevelField(z, root, nil, total.bytes > maxExpandedBytes)
	return &Error{File: file, Line: key.Line, Path: key.Value, Msg: expansionMsg(total, z.aliases)}
}

// expansionMsg says which bound an expansion is over, and the fix.
func expansionMsg(e expansion, aliases bool) string {
	fix := "shorten the spec"
	if aliases {
		fix = "write the values out or use fewer aliases"
	}
	if e.bytes > maxExpandedBytes {
		via := ""
		if aliases {
			via = " through YAML aliases"
		}
		return fmt.Sprintf("the spec expands to %s of text%s, more than the %s allowed; %s", byteSize(e.bytes), via, byteSize(maxExpandedBytes), fix)
	}
	return fmt.Sprintf("the spec has %d values (keys, items and mappings, aliases expanded), more than the %d allowed; %s", e.nodes, maxExpandedNodes, fix)
}

// topLevelField returns the key of root whose value expands the most (in
// bytes, or in nodes) or, with target set, the first whose value reaches
// target.
func topLevelField(z *sizer, root, target *yaml.Node, byBytes bool) *yaml.Node {
	best, most := root, int64(-1)
	seen := map[*yaml.Node]bool{} // shared: a node that did not reach target never will
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if target != nil {
			if reaches(v, target, seen) {
				return k
			}
			continue
		}
		e := z.size(k).plus(z.size(v))
		n := e.nodes
		if byBytes {
			n = e.bytes
		}
		if n > most {
			best, most = k, n
		}
	}
	if best == root {
		// No field: point at the document (its first line).
		return &yaml.Node{Line: root.Line}
	}
	return best
}

// reaches reports whether target is n or inside it, following aliases
// (each node once).
func reaches(n, target *yaml.Node, seen map[*yaml.Node]bool) bool {
	if n == nil || seen[n] {
		return false
	}
	if n == target {
		return true
	}
	seen[n] = true
	if n.Kind == yaml.AliasNode {
		return reaches(n.Alias, target, seen)
	}
	for _, c := range n.Content {
		if reaches(c, target, seen) {
			return true
		}
	}
	return false
}

// checkCopies refuses treatments whose copies of the spec would decode
// more than maxExpandedNodes values in all: each treatment decodes the
// spec without its treatments and factors sections (base), its own set:
// values and one value of each factor. It runs before the copies are
// made, on the listed treatments (tnode) and the parsed factors (fs).
func checkCopies(file string, base, tnode, fnode *yaml.Node, fs []Factor) *Error {
	listed := int64(1)
	if t := resolve(tnode); t != nil && t.Kind == yaml.SequenceNode && len(t.Content) > 0 && len(t.Content) <= maxTreatments {
		listed = int64(len(t.Content))
	}
	combos := int64(1)
	for _, f := range fs {
		combos *= int64(len(f.Values)) // at most maxTreatments: parseFactors checked
	}
	z := newSizer()
	total := listed * combos * z.size(base).nodes
	total += combos * z.size(tnode).nodes // every listed treatment's set:, in each combination
	for _, f := range fs {
		var values int64
		for _, v := range f.nodes {
			values += z.size(v).nodes
		}
		// Each value goes into listed x combos / len(values) treatments.
		total += listed * combos / int64(len(f.nodes)) * values
	}
	if total <= maxExpandedNodes || listed*combos == 1 {
		return nil // one treatment decodes what the spec holds, already bounded
	}
	at, path := tnode, "treatments"
	if len(fs) > 0 {
		at, path = fnode, "factors"
	}
	return &Error{File: file, Line: at.Line, Path: path,
		Msg: fmt.Sprintf("the %d treatments each decode their own copy of the spec, %d values in all, more than the %d allowed; use fewer treatments or factor values, or move long lists (schedule steps) into a trace file", listed*combos, total, maxExpandedNodes)}
}

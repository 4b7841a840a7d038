package spec

import (
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// allocated runs f and returns the bytes it allocated (all goroutines;
// the tests using it run alone in their process or with a generous bound).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The sizes of nested aliases are worked out per parsed node: nine levels
// of nine aliases (9^9 values expanded) take microseconds and give the
// exact expansion.
func TestExpansionIsMeasuredNotExpanded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	wantNodes, wantBytes := int64(10), int64(27)
	for c := 'b'; c <= 'i'; c++ {
		prev := string(c - 1)
		b.WriteString(string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n")
		wantNodes, wantBytes = 1+9*wantNodes, 9*wantBytes
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	z := newSizer()
	got := z.size(root.Content[len(root.Content)-1]) // i
	if got.nodes != wantNodes || got.bytes != wantBytes {
		t.Errorf("i expands to %+v, want %d nodes and %d bytes", got, wantNodes, wantBytes)
	}
	if len(z.sizes) > 100 {
		t.Errorf("measured %d nodes, want each parsed node once (fewer than 100)", len(z.sizes))
	}
	e := checkExpansion("f.yaml", root)
	if e == nil || e.Path != "i" || !strings.Contains(e.Msg, "through YAML aliases, more than the 8.0 MiB allowed; write the values out or use fewer aliases") {
		t.Errorf("billion laughs: %v", e)
	}
}

// At the bound a spec is measured as allowed; one byte more is refused.
func TestExpansionBound(t *testing.T) {
	value := strings.Repeat("v", 1<<20)
	for _, c := range []struct {
		extra int // bytes beyond the bound
		ok    bool
	}{{0, true}, {1, false}} {
		// k: [&v VALUE, *v x 6, REST], REST sized to hit the bound exactly.
		keyLen := maxExpandedBytes - 7*len(value) - len("k") + c.extra
		doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "k"},
			{Kind: yaml.SequenceNode},
		}}
		anchor := &yaml.Node{Kind: yaml.ScalarNode, Value: value, Anchor: "v"}
		seq := doc.Content[1]
		seq.Content = append(seq.Content, anchor)
		for range 6 {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.AliasNode, Value: "v", Alias: anchor})
		}
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: strings.Repeat("k", keyLen)})
		e := checkExpansion("f.yaml", doc)
		if (e == nil) != c.ok {
			t.Errorf("%d bytes over the bound: error %v, want ok=%v", c.extra, e, c.ok)
		}
	}
}

// The inputs of the report that asked for these bounds: a 10 KiB string
// aliased as many times as a 1 MiB file holds, in a factor's values and in
// a treatment's set:. Each gives one sentence, quickly and in little
// memory (it was OOM-killed, or took 75 s and 707 MB).
func TestReportedAliasBombs(t *testing.T) {
	const head = "name: h\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n"
	str := "/" + strings.Repeat("x", 10<<10)
	uses := (MaxSpecBytes - len(str) - 400) / len("*s,")
	aliases := "[" + strings.TrimSuffix(strings.Repeat("*s,", uses), ",") + "]"
	for name, spec := range map[string]string{
		"factors.values": head + "monitor: {cgroups: [&s " + str + "]}\nfactors:\n  - path: workload.ycsb\n    values: " + aliases + "\n",
		"set":            head + "monitor: {cgroups: [&s " + str + "]}\ntreatments:\n  - {name: t, set: {monitor.processes: " + aliases + "}}\n",
	} {
		if len(spec) > MaxSpecBytes {
			t.Fatalf("%s: the spec is %d bytes, over the file bound", name, len(spec))
		}
		var err error
		alloc := allocated(func() { _, err = Parse("f.yaml", []byte(spec)) })
		section := strings.SplitN(name, ".", 2)[0]
		if section == "set" {
			section = "treatments"
		}
		want := "f.yaml:6: " + section + ": the spec expands to 3.3 GiB of text through YAML aliases, more than the 8.0 MiB allowed; write the values out or use fewer aliases"
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
		if alloc > 200<<20 {
			t.Errorf("%s: parsing allocated %d MiB, want under 200 MiB", name, alloc>>20)
		}
	}
}

// A value repeated into hundreds of errors (below the expansion bound)
// prints at most maxPrinted short lines and a count.
func TestAliasedBadValueErrorsAreShort(t *testing.T) {
	spec := base + "monitor:\n  processes: [&p " + strings.Repeat("p", 20000) + strings.Repeat(", *p", 299) + "]\n"
	_, err := Parse("f.yaml", []byte(spec))
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxPrinted+1 || lines[maxPrinted] != "f.yaml: ... and 250 more problems (300 in all); fix the ones above and validate again" {
		t.Fatalf("got %d lines, the last %q", len(lines), lines[len(lines)-1])
	}
	for _, l := range lines {
		if len(l) > 200 {
			t.Errorf("line of %d bytes: %.100s...", len(l), l)
		}
	}
	// A long message from any rule is clipped in the middle, keeping its
	// fix; a long plain key is shortened in the path.
	e := Errors{{File: "f.yaml", Path: joinPath("a", strings.Repeat("k", 5000)), Msg: strings.Repeat("m", 5000) + "; fix it"}}.capped("f.yaml")[0]
	if n := len([]rune(e.Msg)); n > maxMsgRunes || !strings.HasSuffix(e.Msg, "; fix it") || !strings.Contains(e.Msg, " ... ") {
		t.Errorf("clipped message: %d characters, ends %q", n, e.Msg[len(e.Msg)-20:])
	}
	if len(e.Path) > 60 {
		t.Errorf("path of a long key: %q", e.Path)
	}
}

package bottleneck

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// finding is the plain-language verdict of a classification: one sentence
// per class present, the primary bottleneck's class first, then which
// bottleneck is primary when there is more than one.
func finding(r Result) string {
	cfg := r.Config
	if len(r.Bottlenecks) == 0 {
		if len(r.Resources) == 0 {
			return "no bottleneck can be judged: no resource utilisation was observed"
		}
		busiest := r.Resources[0]
		for _, st := range r.Resources[1:] {
			if st.F > busiest.F || (st.F == busiest.F && st.Mean > busiest.Mean) {
				busiest = st
			}
		}
		return fmt.Sprintf("no bottleneck: no resource was above %s%% utilisation in more than %s of its %v intervals (busiest: %s, f_R = %.2f, mean utilisation %.0f%%)",
			num(cfg.Alpha), pct(cfg.Partial), cfg.Lambda, busiest.Resource, busiest.F, busiest.Mean)
	}
	byRes := map[string]ResourceStat{}
	for _, st := range r.Resources {
		byRes[st.Resource] = st
	}
	type group struct {
		class Class
		bs    []Bottleneck
		top   float64
	}
	groups := map[Class]*group{}
	var order []*group
	for _, b := range r.Bottlenecks { // highest f_B first
		key := b.Class
		if key == ClassOscillatory {
			key = Class(string(key) + ":" + strings.Join(b.Resources, ","))
		}
		g := groups[key]
		if g == nil {
			g = &group{class: b.Class, top: b.F}
			groups[key] = g
			order = append(order, g)
		}
		g.bs = append(g.bs, b)
	}
	var sentences []string
	for _, g := range order {
		var ids []string
		var fs []float64
		for _, b := range g.bs {
			ids = append(ids, b.Resources...)
			fs = append(fs, b.F)
		}
		switch g.class {
		case ClassSingle:
			st := byRes[ids[0]]
			sentences = append(sentences, fmt.Sprintf("single bottleneck: %s, critically saturated in %s of %v intervals (f_R = %.2f, mean utilisation %.0f%%)",
				ids[0], pct(st.F), cfg.Lambda, st.F, st.Mean))
		case ClassOscillatory:
			b := g.bs[0]
			most := 0.0
			for _, id := range b.Resources {
				most = math.Max(most, byRes[id].F)
			}
			fb := fmt.Sprintf("f_B = %.2f", b.F)
			if math.IsNaN(b.F) {
				fb = "f_B undefined: no interval observed them all"
			}
			sentences = append(sentences, fmt.Sprintf("oscillatory bottleneck: %s saturate in turn (%s), none alone more than %s of the time",
				describe(b.Resources), fb, pct(most)))
		case ClassConcurrent:
			verb := "saturates independently of the other bottlenecks, part of the time"
			if len(ids) > 1 {
				verb = "saturate independently, each part of the time"
			}
			sentences = append(sentences, fmt.Sprintf("%s: %s %s (f_R = %s)", plural("concurrent bottleneck", len(ids)), describe(ids), verb, fRange(fs)))
		case ClassSimultaneous:
			verb := "is"
			if len(ids) > 1 {
				verb = "are"
			}
			sentences = append(sentences, fmt.Sprintf("%s: %s %s saturated in nearly every interval, independently (f_R = %s)", plural("simultaneous bottleneck", len(ids)), describe(ids), verb, fRange(fs)))
		case ClassOther:
			sentences = append(sentences, fmt.Sprintf("%s %s never saturate together with a partner although one side is fully saturated (f_R = %s), a combination outside 003's classes; the fully saturated one limits the run",
				plural("bottleneck resource", len(ids)), describe(ids), fRange(fs)))
		}
	}
	out := strings.Join(sentences, "; ")
	if len(r.Bottlenecks) > 1 && len(r.Primary()) > 0 {
		var ps []string
		for _, b := range r.Primary() {
			label := describe(b.Resources)
			if b.Class == ClassOscillatory {
				label = "the oscillatory " + label
			}
			ps = append(ps, label)
		}
		out += fmt.Sprintf(". Primary bottleneck: %s (f_B = %.2f)", joinAnd(ps), r.Primary()[0].F)
	}
	return out
}

// describe names a set of resources compactly: "disk:vda of db1..db3" when
// they share a resource, "cpu and disk:vda of db1" when they share a host,
// else a list.
func describe(ids []string) string {
	if len(ids) == 1 {
		return ids[0]
	}
	ids = append([]string(nil), ids...)
	sort.Strings(ids)
	hosts := make([]string, len(ids))
	res := make([]string, len(ids))
	for i, id := range ids {
		hosts[i], res[i], _ = strings.Cut(id, "/")
	}
	if allEqual(res) {
		return res[0] + " of " + hostRange(hosts)
	}
	if allEqual(hosts) {
		return joinAnd(res) + " of " + hosts[0]
	}
	// Group by resource name: "cpu of app1..app6 and db1/net:eth0".
	byRes := map[string][]string{}
	var names []string
	for i := range ids {
		if _, ok := byRes[res[i]]; !ok {
			names = append(names, res[i])
		}
		byRes[res[i]] = append(byRes[res[i]], hosts[i])
	}
	var parts []string
	for _, n := range names {
		if hs := byRes[n]; len(hs) > 1 {
			parts = append(parts, n+" of "+hostRange(hs))
		} else {
			parts = append(parts, hs[0]+"/"+n)
		}
	}
	return joinAnd(parts)
}

// hostRange joins host names, writing three or more consecutive numbered
// hosts of one prefix as a range: db1, db2, db3 -> "db1..db3".
func hostRange(hosts []string) string {
	type numbered struct {
		prefix string
		n      int
	}
	parsed := make([]numbered, len(hosts))
	for i, h := range hosts {
		j := len(h)
		for j > 0 && h[j-1] >= '0' && h[j-1] <= '9' {
			j--
		}
		n, err := strconv.Atoi(h[j:])
		if j == len(h) || err != nil {
			n = -1
		}
		parsed[i] = numbered{h[:j], n}
	}
	idx := make([]int, len(hosts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := parsed[idx[a]], parsed[idx[b]]
		if x.prefix != y.prefix {
			return x.prefix < y.prefix
		}
		return x.n < y.n
	})
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && parsed[idx[i]].n >= 0 && parsed[idx[j+1]].prefix == parsed[idx[i]].prefix && parsed[idx[j+1]].n == parsed[idx[j]].n+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, hosts[idx[i]]+".."+hosts[idx[j]])
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, hosts[idx[k]])
			}
		}
		i = j + 1
	}
	return joinAnd(parts)
}

func allEqual(xs []string) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func plural(s string, n int) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// fRange prints one frequency, or the lowest and highest of several.
func fRange(fs []float64) string {
	lo, hi := fs[0], fs[0]
	for _, f := range fs {
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	if len(fs) == 1 || fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
		return fmt.Sprintf("%.2f", hi)
	}
	return fmt.Sprintf("%.2f to %.2f", lo, hi)
}

// pct prints a fraction as a whole percentage ("31%"), or with one decimal
// below 1%.
func pct(f float64) string {
	if f > 0 && f < 0.01 {
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

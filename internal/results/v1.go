package results

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/store"
)

// Files written before the fact tables (schema 1, Headroom up to the
// release that added them) carry only the spec text. legacyTreatments
// reads the facts from it leniently, as schema-1 Headroom defined its
// fields and defaults, without today's spec parser: unknown or renamed
// fields are ignored, so a later change to the spec never makes old
// results unreadable. What it cannot read is left at its zero value and
// named in the returned note.

// v1InProcess are the schema-1 target types that ran inside Headroom.
var v1InProcess = map[string]bool{"sqlite": true, "disk": true}

// v1Mixes are the YCSB presets' operation mixes (seed-digest §1).
var v1Mixes = map[string]map[string]float64{
	"a": {"read": 0.5, "update": 0.5},
	"b": {"read": 0.95, "update": 0.05},
	"c": {"read": 1},
	"d": {"read": 0.95, "insert": 0.05},
	"e": {"scan": 0.95, "insert": 0.05},
	"f": {"read": 0.5, "read_modify_write": 0.5},
}

func legacyTreatments(c store.Campaign) ([]Treatment, string) {
	if strings.TrimSpace(c.SpecYAML) == "" {
		return nil, "the results database holds no spec text, so its treatments' settings are unknown"
	}
	var root map[string]any
	if err := yaml.Unmarshal([]byte(c.SpecYAML), &root); err != nil || root == nil {
		return nil, fmt.Sprintf("the stored spec text does not read as YAML (%v), so its treatments' settings are unknown", err)
	}
	list, _ := root["treatments"].([]any)
	delete(root, "treatments")
	if len(list) == 0 {
		return []Treatment{legacyTreatment(root, "", 0, nil)}, ""
	}
	var out []Treatment
	var notes []string
	for i, x := range list {
		m, _ := x.(map[string]any)
		name := fmt.Sprint(m["name"])
		tree := deepCopy(root).(map[string]any)
		var set []Setting
		sets, _ := m["set"].(map[string]any)
		paths := make([]string, 0, len(sets))
		for p := range sets {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if err := setPath(tree, p, deepCopy(sets[p])); err != nil {
				notes = append(notes, fmt.Sprintf("treatment %s: %s: %v", name, p, err))
				continue
			}
			set = append(set, Setting{Path: p, Value: scalarText(sets[p])})
		}
		out = append(out, legacyTreatment(tree, name, i, set))
	}
	return out, strings.Join(notes, "; ")
}

// legacyTreatment reads one treatment's facts from its spec tree.
func legacyTreatment(tree map[string]any, name string, index int, set []Setting) Treatment {
	t := Treatment{Name: name, Index: index, Set: set}
	load := mapAt(tree, "load")
	t.Load.Model = str(load["model"], "open")
	if t.Load.Open() {
		t.Load.Arrival = str(load["arrival"], "poisson")
		t.Load.Levels = levelsOf(load["rates"])
		t.Load.MaxInFlight = int(num(load["max_in_flight"], 256))
	} else {
		t.Load.Levels = levelsOf(load["clients"])
		t.Load.ThinkTime = dur(load["think_time"], 0)
	}
	t.Load.Timeout = dur(load["timeout"], 10*time.Second)
	t.Load.Repetitions = int(num(tree["repetitions"], 1))
	t.Load.Order = str(tree["order"], "sequential")
	ph := mapAt(tree, "phases")
	t.Load.Warmup = dur(ph["warmup"], 10*time.Second)
	t.Load.Measure = dur(ph["measure"], 60*time.Second)
	t.Load.Cooldown = dur(ph["cooldown"], 0)
	t.Load.Interval = dur(tree["interval"], time.Second)

	if slo := mapAt(tree, "slo"); len(slo) > 0 {
		t.SLO = &SLO{Percentile: num(slo["percentile"], 0), Threshold: dur(slo["threshold"], 0), Op: str(slo["operation"], "")}
	}
	t.Workload = legacyWorkload(mapAt(tree, "workload"))

	tg := mapAt(tree, "target")
	t.Target.Type = str(tg["type"], "")
	if v, ok := tg["type"]; ok && v == nil {
		t.Target.Type = "null" // YAML reads the bare word as no value; the spec reads it as the null target
	}
	t.Target.InProcess = v1InProcess[t.Target.Type]
	if mg := mapAt(tg, "managed"); tg["managed"] != nil {
		t.Target.Managed = true
		if h := str(mg["host"], ""); h != "" {
			t.Target.Hosts = []string{h}
		}
	}
	t.Reset = str(tree["reset"], "none")

	if a, ok := tree["analysis"]; ok {
		if b, err := yaml.Marshal(a); err == nil {
			_ = yaml.Unmarshal(b, &t.Analysis) // lenient: what does not fit stays at its default
		}
	}
	if evs, ok := tree["events"].([]any); ok {
		for _, x := range evs {
			m, _ := x.(map[string]any)
			t.Events = append(t.Events, ScheduledEvent{At: dur(m["at"], 0), Action: str(m["action"], ""), Host: str(m["host"], "")})
		}
	}
	if lab := mapAt(tree, "lab"); tree["lab"] != nil {
		t.Lab = &LabFacts{Name: str(lab["name"], str(tree["name"], ""))}
		hosts, _ := lab["hosts"].([]any)
		for _, x := range hosts {
			m, _ := x.(map[string]any)
			n, count := str(m["name"], ""), int(num(m["count"], 1))
			if count <= 1 {
				t.Lab.Hosts = append(t.Lab.Hosts, n)
				continue
			}
			for i := 1; i <= count; i++ {
				t.Lab.Hosts = append(t.Lab.Hosts, n+strconv.Itoa(i))
			}
		}
	}
	if m := t.Analysis.Bottleneck.Map; m != nil {
		t.Numbers = map[string]float64{}
		for _, p := range []string{m.X.Path, m.Y.Path} {
			if v, ok := numberAt(tree, p); ok {
				t.Numbers[p] = v
			}
		}
	}
	return t
}

func legacyWorkload(w map[string]any) Workload {
	out := Workload{Kind: "ycsb"}
	if sts, ok := w["statements"].([]any); ok && len(sts) > 0 {
		out.Kind = "statements"
		out.Mix = map[string]float64{}
		for _, x := range sts {
			m, _ := x.(map[string]any)
			n := str(m["name"], "")
			out.Statements = append(out.Statements, n)
			out.Mix[n] += num(m["weight"], 1)
		}
		return normalized(out)
	}
	out.YCSB = strings.ToLower(str(w["ycsb"], ""))
	out.RecordCount = int64(num(w["record_count"], 1000))
	out.FieldCount = int(num(w["field_count"], 10))
	out.FieldLength = int(num(w["field_length"], 100))
	if ops, ok := w["operations"].(map[string]any); ok && len(ops) > 0 {
		out.Mix = map[string]float64{}
		for op, x := range ops {
			out.Mix[op] = num(x, 0)
		}
	} else if m, ok := v1Mixes[out.YCSB]; ok {
		out.Mix = map[string]float64{}
		for op, x := range m {
			out.Mix[op] = x
		}
	}
	def := "zipfian"
	if out.YCSB == "d" {
		def = "latest"
	}
	out.Distribution = str(w["request_distribution"], def)
	return normalized(out)
}

// normalized scales the mix to sum to 1.
func normalized(w Workload) Workload {
	var sum float64
	for _, x := range w.Mix {
		sum += x
	}
	if sum > 0 {
		for op := range w.Mix {
			w.Mix[op] /= sum
		}
	}
	return w
}

// levelsOf reads a level list written as a sequence or as {from, to, step}.
func levelsOf(x any) []float64 {
	switch v := x.(type) {
	case []any:
		out := make([]float64, 0, len(v))
		for _, e := range v {
			out = append(out, num(e, 0))
		}
		return out
	case map[string]any:
		from, to, step := num(v["from"], 0), num(v["to"], 0), num(v["step"], 0)
		var out []float64
		for i := 0; step > 0 && i < 100000; i++ {
			l := from + float64(i)*step
			if l > to+step*1e-9 {
				break
			}
			out = append(out, l)
		}
		return out
	}
	return nil
}

func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

func str(x any, def string) string {
	if x == nil {
		return def
	}
	s := strings.TrimSpace(fmt.Sprint(x))
	if s == "" {
		return def
	}
	return s
}

func num(x any, def float64) float64 {
	switch v := x.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case float64:
		return v
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			return f
		}
	}
	return def
}

func dur(x any, def time.Duration) time.Duration {
	if x == nil {
		return def
	}
	if n, ok := x.(int); ok && n == 0 {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(fmt.Sprint(x)))
	if err != nil {
		return def
	}
	return d
}

func scalarText(x any) string {
	if b, err := yaml.Marshal(x); err == nil {
		return strings.TrimSpace(string(b))
	}
	return fmt.Sprint(x)
}

func deepCopy(x any) any {
	switch v := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return x
}

// seg is one step of a field path: a key, or a list index (key "").
type seg struct {
	key   string
	index int
}

// splitPath splits a field path such as lab.hosts[0].volumes[0].iops.
func splitPath(p string) ([]seg, error) {
	var out []seg
	for _, part := range strings.Split(p, ".") {
		key := part
		var idx []int
		for {
			i := strings.IndexByte(key, '[')
			if i < 0 {
				break
			}
			j := strings.IndexByte(key[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unclosed [")
			}
			n, err := strconv.Atoi(key[i+1 : i+j])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%q is not a list index", key[i+1:i+j])
			}
			idx = append(idx, n)
			key = key[:i] + key[i+j+1:]
		}
		if key == "" {
			return nil, fmt.Errorf("empty field name")
		}
		out = append(out, seg{key: key, index: -1})
		for _, n := range idx {
			out = append(out, seg{index: n})
		}
	}
	return out, nil
}

// setPath sets the value at path in tree, making maps on the way.
func setPath(tree map[string]any, path string, value any) error {
	segs, err := splitPath(path)
	if err != nil {
		return err
	}
	var cur any = tree
	for i, s := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			if s.index >= 0 {
				return fmt.Errorf("[%d] indexes a mapping", s.index)
			}
			if last {
				c[s.key] = value
				return nil
			}
			next, ok := c[s.key]
			if !ok || next == nil {
				if segs[i+1].index >= 0 {
					return fmt.Errorf("%s is not written", s.key)
				}
				next = map[string]any{}
				c[s.key] = next
			}
			cur = next
		case []any:
			if s.index < 0 || s.index >= len(c) {
				return fmt.Errorf("no item [%d]", s.index)
			}
			if last {
				c[s.index] = value
				return nil
			}
			cur = c[s.index]
		default:
			return fmt.Errorf("%s is not a mapping or list", s.key)
		}
	}
	return nil
}

// numberAt reads a number at path; a host's count that is not written is
// 1 (schema 1's default).
func numberAt(tree map[string]any, path string) (float64, bool) {
	segs, err := splitPath(path)
	if err != nil {
		return 0, false
	}
	var cur any = tree
	for _, s := range segs {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[s.key]
		case []any:
			if s.index < 0 || s.index >= len(c) {
				return 0, false
			}
			cur = c[s.index]
		default:
			return 0, false
		}
	}
	if cur == nil && strings.HasSuffix(path, ".count") {
		return 1, true
	}
	if d, ok := cur.(string); ok {
		if x, err := time.ParseDuration(d); err == nil {
			return x.Seconds(), true
		}
	}
	v := num(cur, -1)
	return v, v >= 0
}

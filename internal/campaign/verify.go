package campaign

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/analysis/cost"
	"github.com/headroom-dev/headroom/internal/analysis/esl"
	assess "github.com/headroom-dev/headroom/internal/analysis/pressure"
	"github.com/headroom-dev/headroom/internal/analysis/slp"
	"github.com/headroom-dev/headroom/internal/lab"
	"github.com/headroom-dev/headroom/internal/results"
	"github.com/headroom-dev/headroom/internal/spec"
)

// Change is a pressure recommendation (seed 000 §5.2) as a treatment of
// the campaign that applies it: the base treatment's settings plus the
// change. headroom assess --verify runs it and compares (Compare).
type Change struct {
	Base      string            // the treatment the recommendation was made for
	Name      string            // the verifying treatment
	Set       []results.Setting // its settings: the base's, then the change
	What      string            // the change in words
	Host      string            // the pressed host, service and quality
	Group     string            // for a scale-out, the lab.hosts name of the nodes compared (the most pressed one each side)
	Service   string
	Quality   esl.Quality
	Existing  bool // a treatment with these settings is already in the campaign (Name); nothing to run
	finding   slp.Finding
	changeKey string
}

// VerifyChanges turns every persistent-pressure finding of the assessment
// into a Change (changeOf): more provisioned IOPS for a volume's ops/s
// (option_a.iops, else cost.DefaultIOPSFactor times, within the volume
// type's limits, as cost.Action words it), the cheapest larger instance
// type for a CPU, a link or a volume connection, and, where the catalog
// has nothing larger, twice the nodes of the host's tier. s is the
// campaign's spec as stored. Findings that no spec field expresses (a
// host outside a lab, a single server at the catalog's top) come back as
// notes, one sentence each.
//
// In a campaign made from factors: a change becomes new levels of the
// factors it sets (the verifying treatment is the base's combination with
// the new level; the other combinations with it run too, so the design
// stays full factorial); a change to a field that is no factor is a note.
func VerifyChanges(r *results.Results, a *assess.Assessment, s *spec.Spec) ([]Change, []string, error) {
	var src []byte
	if r != nil {
		src = []byte(r.Campaign().SpecYAML)
	}
	return verifyChanges(r, a, s, src)
}

// verifyChanges is VerifyChanges with the stored spec's text: a campaign
// made from factors needs it to name the treatments new levels make, and
// it marks the treatments an earlier --verify added.
func verifyChanges(r *results.Results, a *assess.Assessment, s *spec.Spec, src []byte) ([]Change, []string, error) {
	if len(s.Treatments) == 0 {
		return nil, nil, fmt.Errorf("campaign %s has no treatments:, so its runs cannot be told apart from a verifying treatment's; name its setup as a treatment (treatments: [{name: base}]) and run it again, or write the treatment by hand", s.Name)
	}
	// A treatment --verify added is compared, not verified in turn: one
	// call takes one step from the treatments the user wrote, so a
	// pressure that persists does not double a cluster on every call.
	var added map[string]bool
	if len(s.Factors) == 0 {
		added = addedByVerify(src)
	}
	var out []Change
	var notes []string
	seen := map[string]bool{}
	for _, t := range a.Treatments {
		idx := slices.IndexFunc(s.Treatments, func(x spec.Treatment) bool { return x.Name == t.Name })
		if idx < 0 {
			continue
		}
		base := s.Treatments[idx]
		for _, f := range t.Findings {
			if f.Class != slp.ProvisionMore {
				continue
			}
			p, err := changeOf(r, t, base.Spec, f)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %s %s %s: %v", t.Name, f.Host, f.Service, f.Quality, err))
				continue
			}
			if added[t.Name] {
				if !seen["added:"+t.Name] {
					seen["added:"+t.Name] = true
					notes = append(notes, fmt.Sprintf("%s: an earlier assess --verify added it, and one --verify takes one step from the treatments you wrote; to measure its own recommendation (%s), write that treatment into the campaign's treatments: and run headroom run --resume", t.Name, p.what))
				}
				continue
			}
			set := slices.DeleteFunc(settingsOf(base), func(x results.Setting) bool {
				return slices.ContainsFunc(p.set, func(y results.Setting) bool { return y.Path == x.Path })
			})
			set = append(set, p.set...)
			if len(s.Factors) > 0 {
				if path := notAFactor(s, p.set); path != "" {
					notes = append(notes, fmt.Sprintf("%s: %s %s %s: %s (%s) sets %s, which is not one of the campaign's factors, and a treatment added beside factors: would be crossed with all of them; add it as a factor and run the campaign again", t.Name, f.Host, f.Service, f.Quality, p.what, p.label, path))
					continue
				}
			}
			key := setKey(set)
			if seen[key] {
				continue
			}
			seen[key] = true
			ch := Change{Base: t.Name, Set: set, What: p.what, Host: f.Host, Group: p.group, Service: f.Service, Quality: f.Quality, finding: f.Finding, changeKey: key}
			for _, o := range s.Treatments {
				if setKey(settingsOf(o)) == key {
					ch.Name, ch.Existing = o.Name, true
				}
			}
			if !ch.Existing {
				ch.Name = treatmentName(s, t.Name, p.label)
			}
			out = append(out, ch)
		}
	}
	if len(s.Factors) > 0 {
		if err := nameByLevels(s, src, out); err != nil {
			return nil, nil, err
		}
	}
	return out, notes, nil
}

// notAFactor is the first path of set that no factor of s sets ("" when
// every one is a factor's).
func notAFactor(s *spec.Spec, set []results.Setting) string {
	for _, x := range set {
		if !slices.ContainsFunc(s.Factors, func(f spec.Factor) bool { return f.Path == x.Path }) {
			return x.Path
		}
	}
	return ""
}

// nameByLevels names the changes of a factor campaign after the
// treatments their new levels make: the stored spec with the levels added
// is expanded as the campaign will expand it.
func nameByLevels(s *spec.Spec, src []byte, changes []Change) error {
	grown, added, err := addToSpec(src, changes, true)
	if err != nil || added == 0 {
		return err
	}
	ns, err := spec.Parse(s.File, grown)
	if err != nil {
		return fmt.Errorf("the campaign's spec with the recommended factor levels does not validate: %w", err)
	}
	for i := range changes {
		if changes[i].Existing {
			continue
		}
		for _, t := range ns.Treatments {
			if setKey(settingsOf(t)) == changes[i].changeKey {
				changes[i].Name = t.Name
			}
		}
	}
	return nil
}

// setKey identifies a treatment by what it sets, in any order.
func setKey(set []results.Setting) string {
	xs := make([]string, len(set))
	for i, x := range set {
		xs[i] = x.Path + "=" + x.Value
	}
	sort.Strings(xs)
	return strings.Join(xs, "\n")
}

// treatmentName names a verifying treatment after its base and the
// change's label ("piops-300-iops-1800"), unique in the campaign.
func treatmentName(s *spec.Spec, base, label string) string {
	name := nameSafe(base + "-" + label)
	if len(name) > 56 {
		name = name[:56]
	}
	out := name
	for i := 2; slices.ContainsFunc(s.Treatments, func(t spec.Treatment) bool { return t.Name == out }); i++ {
		out = fmt.Sprintf("%s-%d", name, i)
	}
	return out
}

// resourceOf is the resource a finding is about (the subject's).
func resourceOf(t assess.Treatment, f assess.Finding) string {
	for _, s := range t.Subjects {
		if s.Host == f.Host && s.Service == f.Service {
			return s.Resource
		}
	}
	return f.Service
}

// Verify adds the changes that are not in the campaign yet as treatments
// (to the stored spec and the spec.yaml copy of the results directory dir)
// and runs the campaign's pending runs: theirs, and any the campaign left
// unfinished. The new runs are appended to the same store.
func Verify(ctx context.Context, dir string, changes []Change, opt Options) (Outcome, error) {
	ss, s, err := ReopenSession(dir)
	if err != nil {
		return Outcome{}, err
	}
	defer ss.Close()
	if _, err := ss.Store.MarkRunningInterrupted("the process ended without finishing this run"); err != nil {
		return Outcome{}, err
	}
	c, err := ss.Store.Campaign()
	if err != nil {
		return Outcome{}, err
	}
	src, added, err := addToSpec([]byte(c.SpecYAML), changes, len(s.Factors) > 0)
	if err != nil {
		return Outcome{}, err
	}
	if added > 0 {
		name := c.SpecFile
		if name == "" {
			name = "spec.yaml"
		}
		ns, err := spec.Parse(name, src)
		if err != nil {
			return Outcome{}, fmt.Errorf("the campaign's spec with the verifying treatments does not validate: %w", err)
		}
		ns.File = s.File
		if err := ss.Store.SetSpecYAML(string(src)); err != nil {
			return Outcome{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), src, 0o644); err != nil {
			return Outcome{}, fmt.Errorf("writing the spec copy into %s: %w", dir, err)
		}
		s = ns
	}
	_, pending, err := pendingRuns(s, ss.Store)
	if err != nil {
		return Outcome{}, err
	}
	if pending == 0 {
		return Outcome{Dir: ss.Dir, StorePath: ss.Store.Path(), Spec: s}, nil
	}
	return execute(ctx, s, ss.Store, ss.Dir, opt)
}

// addToSpec adds the changes not already in the campaign to the stored
// spec: as entries of its treatments: list, or, in a campaign made from
// factors:, as new levels of the factors they set. Comments and the rest
// of the document stay as they were. added counts the entries or levels.
func addToSpec(src []byte, changes []Change, factors bool) (out []byte, added int, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, 0, fmt.Errorf("reading the stored spec: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, 0, fmt.Errorf("the stored spec is not a YAML mapping")
	}
	root := doc.Content[0]
	key := "treatments"
	if factors {
		key = "factors"
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			list = root.Content[i+1]
		}
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, 0, fmt.Errorf("the stored spec has no %s: list to add to", key)
	}
	if factors {
		added, err = addLevels(list, changes)
	} else {
		added = appendTreatments(list, changes)
	}
	if err != nil {
		return nil, 0, err
	}
	out, err = yaml.Marshal(&doc)
	return out, added, err
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// verifyComment starts the comment appendTreatments puts on an entry.
const verifyComment = "added by headroom assess --verify"

// addedByVerify is the names of the treatments: entries of a stored spec
// that appendTreatments added (their comment says so); nil when the text
// does not parse.
func addedByVerify(src []byte) map[string]bool {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	out := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "treatments" || root.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		for _, item := range root.Content[i+1].Content {
			if item.Kind != yaml.MappingNode || len(item.Content) < 2 {
				continue
			}
			// yaml.v3 attaches a comment above a block entry to the entry,
			// and above a flow one to its first key.
			if !strings.Contains(item.HeadComment, verifyComment) && !strings.Contains(item.Content[0].HeadComment, verifyComment) {
				continue
			}
			for j := 0; j+1 < len(item.Content); j += 2 {
				if item.Content[j].Value == "name" {
					out[item.Content[j+1].Value] = true
				}
			}
		}
	}
	return out
}

// appendTreatments adds a {name, set} entry to the treatments: list for
// every change not already in the campaign.
func appendTreatments(list *yaml.Node, changes []Change) int {
	added := 0
	for _, ch := range changes {
		if ch.Existing {
			continue
		}
		set := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, x := range ch.Set {
			set.Content = append(set.Content, scalar(x.Path), scalar(x.Value))
		}
		item := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("name"), scalar(ch.Name), scalar("set"), set},
			HeadComment: verifyComment + ": " + ch.What}
		list.Content = append(list.Content, item)
		added++
	}
	return added
}

// addLevels adds each new value a change sets to its factor's values:
// (with a label when the factor lists labels:), once.
func addLevels(list *yaml.Node, changes []Change) (int, error) {
	added := 0
	for _, ch := range changes {
		if ch.Existing {
			continue
		}
		for _, x := range ch.Set {
			f := factorNode(list, x.Path)
			if f == nil {
				continue // a treatment's own setting: the base's, unchanged
			}
			values, labels := field(f, "values"), field(f, "labels")
			if values == nil || values.Kind != yaml.SequenceNode {
				return 0, fmt.Errorf("factor %s has no values: list to add %s to", x.Path, x.Value)
			}
			if slices.ContainsFunc(values.Content, func(v *yaml.Node) bool { return v.Value == x.Value }) {
				continue
			}
			values.Content = append(values.Content, scalar(x.Value))
			if labels != nil && labels.Kind == yaml.SequenceNode {
				labels.Content = append(labels.Content, scalar(nameSafe(x.Value)))
			}
			f.HeadComment = strings.TrimSpace(f.HeadComment + "\nlevel " + x.Value + " added by headroom assess --verify: " + ch.What)
			added++
		}
	}
	return added, nil
}

// factorNode is the factors: entry whose path: is path.
func factorNode(list *yaml.Node, path string) *yaml.Node {
	for _, f := range list.Content {
		if p := field(f, "path"); p != nil && p.Value == path {
			return f
		}
	}
	return nil
}

// field is the value of key in mapping node m, nil when absent.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// nameSafe makes a value usable in a treatment name.
func nameSafe(v string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, v)
}

// Verdict is a verified recommendation: the pressed quality, throughput
// and price per req/s of the base treatment (Before) and the verifying
// one (After), and whether the change paid.
type Verdict struct {
	Change        Change
	Before, After Side
	Paid          bool
	// Achieved says the sides are compared on their highest achieved
	// throughput: one of them (or both) has no level that met the SLO.
	Achieved bool
	Text     string // "the recommendation paid: ..." / "did not pay: ..."
}

// Side is one treatment's figures in a Verdict; NaN when unknown.
type Side struct {
	Treatment       string
	Host            string  // the host the SLP is of: the pressed one, or a scale-out's most pressed node
	MeanSLP, P99SLP float64 // of the pressed host, service and quality, percent
	// Throughput is the figure the cost divides by, req/s: the capacity
	// under the SLO, or, when a side has none (no level met the SLO), the
	// highest achieved throughput on both sides (Verdict.Achieved).
	Throughput float64
	PerReqPerS float64 // $/month per req/s
	// LabPerReqPerS is the whole lab's monthly price (every host and
	// volume) over the throughput: the figure a verdict uses when the
	// pressure analysis prices no deployment (hosts that differ).
	LabPerReqPerS float64
	StillPressed  bool // the quality is still under persistent pressure
	// Offered is the offered rate Throughput was reached at, req/s (NaN
	// unless every run was open loop).
	Offered float64

	capacity, achieved      float64 // req/s
	capacityAt, achievedAt  float64 // the levels they were reached at
	openLoop                bool    // levels are offered req/s
	deployMonthly, labMonth float64 // $/month; NaN when unpriced
}

// servedOffered says a side's throughput is within 3% of the open-loop
// rate it was reached at.
func servedOffered(sd Side) bool {
	return sd.Offered > 0 && sd.Throughput >= 0.97*sd.Offered
}

// perReqPerS is a monthly price over a throughput; NaN when either is
// unknown.
func perReqPerS(monthly, throughput float64) float64 {
	if !(monthly > 0) || !(throughput > 0) {
		return math.NaN()
	}
	return monthly / throughput
}

// Compare judges a change from a fresh assessment of the campaign holding
// both treatments. It paid when the price of a req/s fell (seed 000
// Table 1 compares $/month per req/s); without prices, when throughput rose
// and the pressure is no longer persistent.
func Compare(a *assess.Assessment, ch Change) (Verdict, error) {
	v := Verdict{Change: ch}
	var err error
	if v.Before, err = sideOf(a, ch.Base, ch); err != nil {
		return v, err
	}
	if v.After, err = sideOf(a, ch.Name, ch); err != nil {
		return v, err
	}
	// Both sides on one basis: the capacity under the SLO, or the achieved
	// throughput when either side has no capacity.
	v.Achieved = math.IsNaN(v.Before.capacity) || math.IsNaN(v.After.capacity)
	for _, sd := range []*Side{&v.Before, &v.After} {
		sd.Throughput, sd.Offered = sd.capacity, sd.capacityAt
		if v.Achieved {
			sd.Throughput, sd.Offered = sd.achieved, sd.achievedAt
		}
		if !sd.openLoop {
			sd.Offered = math.NaN()
		}
		sd.PerReqPerS = perReqPerS(sd.deployMonthly, sd.Throughput)
		sd.LabPerReqPerS = perReqPerS(sd.labMonth, sd.Throughput)
	}
	b, af := v.Before, v.After
	facts := fmt.Sprintf("%s %s pressure (%s) mean %.0f%% -> %.0f%%, p99 %.0f%% -> %.0f%%; throughput %.1f -> %.1f req/s",
		ch.Host, ch.Service, ch.Quality, b.MeanSLP, af.MeanSLP, b.P99SLP, af.P99SLP, b.Throughput, af.Throughput)
	priced := !math.IsNaN(b.PerReqPerS) && !math.IsNaN(af.PerReqPerS)
	whole := ""
	if !priced && !math.IsNaN(b.LabPerReqPerS) && !math.IsNaN(af.LabPerReqPerS) {
		// Both sides at the whole lab's price, never one of each.
		v.Before.PerReqPerS, v.After.PerReqPerS = b.LabPerReqPerS, af.LabPerReqPerS
		b, af, priced, whole = v.Before, v.After, true, " (the whole lab's price: every host and volume)"
	}
	if v.Achieved {
		facts += " (achieved throughput: no level met the SLO on one side or both)"
	}
	if priced {
		facts += fmt.Sprintf("; %s -> %s per req/s a month%s", cost.Money(b.PerReqPerS), cost.Money(af.PerReqPerS), whole)
		v.Paid = af.PerReqPerS < b.PerReqPerS
	} else {
		v.Paid = af.Throughput > b.Throughput && !af.StillPressed
		facts += " (no prices: judged on throughput and pressure alone)"
	}
	rose := af.Throughput > b.Throughput
	switch {
	case v.Paid:
		v.Text = "the recommendation paid: " + facts
	case priced && rose:
		v.Text = fmt.Sprintf("the recommendation did not pay: throughput rose %.0f%%, less than the price of the deployment did; %s", 100*(af.Throughput/b.Throughput-1), facts)
	case rose:
		v.Text = fmt.Sprintf("the recommendation did not pay: throughput rose %.0f%%, but the pressure is still persistent; %s", 100*(af.Throughput/b.Throughput-1), facts)
	case servedOffered(af):
		// An open loop cannot show more than it offers: the change may
		// carry more, but this campaign cannot tell.
		v.Text = fmt.Sprintf("the recommendation did not pay as measured: throughput could not rise, %s served the offered %.0f req/s; add higher rates to see what the change carries; %s", af.Treatment, af.Offered, facts)
	default:
		v.Text = "the recommendation did not pay: throughput did not rise; " + facts
	}
	if af.StillPressed {
		who := ch.Host
		if ch.Group != "" {
			who = "a node of " + ch.Group + "'s"
		}
		v.Text += fmt.Sprintf("; %s %s is still under persistent pressure", who, ch.Service)
	}
	return v, nil
}

func sideOf(a *assess.Assessment, name string, ch Change) (Side, error) {
	i := slices.IndexFunc(a.Treatments, func(t assess.Treatment) bool { return t.Name == name })
	if i < 0 {
		return Side{}, fmt.Errorf("treatment %s has no assessed runs; run it (headroom run --resume) and assess again", name)
	}
	t := a.Treatments[i]
	sd := Side{Treatment: name, MeanSLP: math.NaN(), P99SLP: math.NaN(), Throughput: t.Throughput, PerReqPerS: math.NaN(), LabPerReqPerS: math.NaN(),
		capacity: t.Throughput, achieved: t.Achieved, capacityAt: t.Level, achievedAt: t.AchievedLevel, openLoop: t.OpenLoop,
		deployMonthly: math.NaN(), labMonth: labMonthly(t.Lab)}
	// A scale-out changes the nodes, so each side is judged by its most
	// pressed node of the group (the pressure is then no longer persistent
	// when no node's is).
	pressed := func(host string) bool {
		if ch.Group == "" {
			return host == ch.Host
		}
		return inGroup(host, ch.Group, 2)
	}
	for _, s := range t.Subjects {
		if pressed(s.Host) && s.Service == ch.Service && s.Quality == ch.Quality && (sd.Host == "" || s.Summary.Box.Mean > sd.MeanSLP) {
			sd.Host, sd.MeanSLP, sd.P99SLP = s.Host, s.Summary.Box.Mean, s.Summary.Box.P99
		}
	}
	for _, f := range t.Findings {
		if f.Class == slp.ProvisionMore && pressed(f.Host) && f.Service == ch.Service && f.Quality == ch.Quality {
			sd.StillPressed = true
		}
	}
	if t.Cost != nil {
		sd.deployMonthly = t.Cost.MonthlyCost
	}
	return sd, nil
}

// labMonthly is the monthly price of every host and volume of a lab as it
// came up (the load's client host excluded), 0 when unpriced.
func labMonthly(l *results.Lab) float64 {
	if l == nil {
		return 0
	}
	var m float64
	for _, h := range l.Hosts {
		if h.Host == lab.ClientHost {
			continue
		}
		m += h.PricePerHour * cost.HoursPerMonth
		for _, v := range h.Volumes {
			m += v.MonthlyPrice
		}
	}
	return m
}

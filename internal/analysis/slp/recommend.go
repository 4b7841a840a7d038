package slp

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/analysis/esl"
)

// Subject is the SLP series of one quality of one service on one host,
// e.g. host "db1", service "volume:vol-1", quality ops_per_s.
type Subject struct {
	Host    string
	Service string
	Quality esl.Quality
	Series  Series // SLP, percent
}

// Rules are the thresholds of the recommendation (seed-digest §4). Zero
// fields take the defaults of DefaultRules.
type Rules struct {
	// Persistent pressure: SLP above PersistentThreshold for at least
	// PersistentTCPTPct of the covered time (TCPT) -> provision more.
	PersistentThreshold float64
	PersistentTCPTPct   float64
	// Transient saturation: SLP above TransientThreshold continuously for
	// at least TransientMCPT (MCPT), without persistent pressure.
	TransientThreshold float64
	TransientMCPT      time.Duration
	// TransientFixed keeps TransientMCPT as given; otherwise it shortens
	// to the runs' measured spans (TransientEvent).
	TransientFixed bool
	// Over-provisioned: the 99th percentile SLP of every quality of the
	// service below OverProvisionedP99.
	OverProvisionedP99 float64
}

// DefaultRules: persistent when SLP > 70% at least half of the time (the
// median exceeds 70%; seed 000 §5.2 provisioned more at mean SLP above 80%
// and 75th percentile above 92%); transient when SLP > 95% for a minute in
// a row (or half a run's window, when runs are shorter: TransientEvent);
// over-provisioned when p99 < 70% on every quality (seed 000 §5.2:
// below 71%).
func DefaultRules() Rules {
	return Rules{PersistentThreshold: 70, PersistentTCPTPct: 50, TransientThreshold: 95, TransientMCPT: time.Minute, OverProvisionedP99: 70}
}

func (r Rules) withDefaults() Rules {
	d := DefaultRules()
	if r.PersistentThreshold == 0 {
		r.PersistentThreshold = d.PersistentThreshold
	}
	if r.PersistentTCPTPct == 0 {
		r.PersistentTCPTPct = d.PersistentTCPTPct
	}
	if r.TransientThreshold == 0 {
		r.TransientThreshold = d.TransientThreshold
	}
	if r.TransientMCPT == 0 {
		r.TransientMCPT = d.TransientMCPT
	}
	if r.OverProvisionedP99 == 0 {
		r.OverProvisionedP99 = d.OverProvisionedP99
	}
	return r
}

// Class is the kind of a finding.
type Class string

// Classes of findings (seed-digest §4, interpretation).
const (
	// ProvisionMore: high TCPT, persistent load; provision more of the
	// quality if the load persists.
	ProvisionMore Class = "provision_more"
	// TransientSaturation: high MCPT without high TCPT; a sustained event
	// (compaction, migration) saturates the quality; reconsider it.
	TransientSaturation Class = "transient_saturation"
	// OverProvisioned: p99 SLP below the threshold on every quality of the
	// service.
	OverProvisioned Class = "over_provisioned"
)

// Finding is one recommendation with its evidence.
type Finding struct {
	Host, Service string
	Quality       esl.Quality // "" for OverProvisioned, which covers every quality
	Class         Class
	Message       string // one sentence with the numbers
	// Evidence of the quality (for OverProvisioned: of the quality with
	// the highest p99).
	Mean, P99 float64
	TCPTPct   float64 // at Rules.PersistentThreshold
	MCPT      time.Duration
	MCPTPct   float64 // at Rules.TransientThreshold
	Covered   time.Duration
}

// Recommend classifies each subject (seed-digest §4): a quality with high
// TCPT needs more provisioning; one with high MCPT but not high TCPT is
// saturated by a transient event; a service whose every quality keeps its
// p99 below the threshold (and no finding of the other two kinds) is
// over-provisioned. Subjects with none of these
// give no finding. Findings are sorted by host, service, quality.
func Recommend(subjects []Subject, rules Rules) ([]Finding, error) {
	r := rules.withDefaults()
	if !(r.PersistentTCPTPct > 0 && r.PersistentTCPTPct <= 100) {
		return nil, fmt.Errorf("PersistentTCPTPct %v must be a percentage in (0, 100]", r.PersistentTCPTPct)
	}
	if r.TransientMCPT < 0 {
		return nil, fmt.Errorf("TransientMCPT %v must be positive", r.TransientMCPT)
	}
	type svcKey struct{ host, service string }
	type eval struct {
		s                  Subject
		box                Box
		persist, transient Critical
	}
	bySvc := map[svcKey][]eval{}
	// flagged holds the services with a pressure finding on some quality:
	// they are not also called over-provisioned, since provisioning less
	// would deepen that pressure (a day of samples with one 5-minute
	// saturation keeps its p99 low).
	flagged := map[svcKey]bool{}
	var out []Finding
	for _, s := range subjects {
		if len(s.Series) == 0 {
			return nil, fmt.Errorf("subject %s %s %s has no SLP points; leave it out or give its series", s.Host, s.Service, s.Quality)
		}
		where := fmt.Sprintf("%s %s %s", s.Host, s.Service, s.Quality)
		b, err := Boxplot(s.Series)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p, err := CriticalTime(s.Series, r.PersistentThreshold)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		tr, err := CriticalTime(s.Series, r.TransientThreshold)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		ev, err := TransientEvent(s.Series, r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		k := svcKey{s.Host, s.Service}
		bySvc[k] = append(bySvc[k], eval{s, b, p, tr})
		f := Finding{Host: s.Host, Service: s.Service, Quality: s.Quality, Mean: b.Mean, P99: b.P99,
			TCPTPct: p.TCPTPct, MCPT: tr.MCPT, MCPTPct: tr.MCPTPct, Covered: b.Covered}
		switch {
		case p.TCPTPct >= r.PersistentTCPTPct:
			f.Class = ProvisionMore
			f.Message = fmt.Sprintf("%s %s: provision more %s: SLP was above %g%% for %.1f%% of %s (TCPT); mean %.0f%%, p99 %.0f%%",
				s.Host, s.Service, s.Quality, r.PersistentThreshold, p.TCPTPct, secs(b.Covered), b.Mean, b.P99)
		case ev.Fires:
			f.Class = TransientSaturation
			f.Message = fmt.Sprintf("%s %s: a transient event saturates %s: SLP stayed above %g%% for %s in a row (MCPT, %.1f%% of %s) but was above %g%% for only %.1f%% of the time",
				s.Host, s.Service, s.Quality, r.TransientThreshold, secs(ev.Longest), 100*ev.Longest.Seconds()/b.Covered.Seconds(), secs(b.Covered), r.PersistentThreshold, p.TCPTPct)
		default:
			continue
		}
		flagged[k] = true
		out = append(out, f)
	}
	for k, evs := range bySvc {
		top, all := evs[0], true // top: the quality with the highest p99
		var parts []string
		for _, e := range evs {
			all = all && e.box.P99 < r.OverProvisionedP99
			if e.box.P99 > top.box.P99 {
				top = e
			}
			parts = append(parts, fmt.Sprintf("%s %.0f%%", e.s.Quality, e.box.P99))
		}
		if !all || flagged[k] {
			continue
		}
		sort.Strings(parts)
		out = append(out, Finding{Host: k.host, Service: k.service, Class: OverProvisioned,
			Message: fmt.Sprintf("%s %s is over-provisioned: p99 SLP below %g%% on every quality (%s)", k.host, k.service, r.OverProvisionedP99, strings.Join(parts, ", ")),
			Mean:    top.box.Mean, P99: top.box.P99, TCPTPct: top.persist.TCPTPct, MCPT: top.transient.MCPT, MCPTPct: top.transient.MCPTPct, Covered: top.box.Covered})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		return a.Quality < b.Quality
	})
	return out, nil
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%g s", math.Round(d.Seconds()*10)/10)
}

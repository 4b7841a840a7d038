package spec

import (
	"fmt"
	"math"

	"github.com/headroom-dev/headroom/internal/analysis/slp"
)

// maxOptionBNodes is the largest cluster option B may price, as
// internal/analysis/cost.MaxNodes (this package does not import the cost
// analysis).
const maxOptionBNodes = 100000

// ESLAnalysis is analysis.esl: how `headroom assess` and the report judge
// service level pressure (seed-digest §4; docs/esl.md, "Settings"). Every
// field is optional; zero values take the defaults below.
type ESLAnalysis struct {
	// Thresholds are the critical SLP thresholds c in percent at which
	// MCPT and TCPT are reported; default [70, 95].
	Thresholds []float64 `yaml:"thresholds"`
	// OpSize is where a volume's ESL is taken: "best" (default: per
	// quality, at the op size where it is highest) or "observed" (at each
	// interval's mean op size).
	OpSize string `yaml:"op_size"`
	// OpSizesKiB are the candidate op sizes of "best"; default the
	// empirical model's benchmarked sizes, else 4, 32, 64, 256, 1024.
	OpSizesKiB []float64 `yaml:"op_sizes_kib"`
	// Models give the ESL model of a host's resource from a file; they
	// override the model Headroom derives from the lab.
	Models []ESLModelFile `yaml:"models"`
	// Rules are the recommendation's thresholds.
	Rules ESLRules `yaml:"rules"`
	// Base names the treatment that is the deployment before the change;
	// default the first treatment.
	Base string `yaml:"base"`
	// OptionA is the change a "provision more" recommendation prices.
	OptionA ESLOptionA `yaml:"option_a"`
	// OptionB bounds the scale-out cluster of the cost comparison.
	OptionB ESLOptionB `yaml:"option_b"`
	// Pairs name a provider-side and a client-side series of the same
	// volume whose normalisation factor is fitted (seed 000 §5.3).
	Pairs []ESLPair `yaml:"pairs"`
}

// ESLModelFile is one entry of analysis.esl.models.
type ESLModelFile struct {
	Host     string `yaml:"host"`     // e.g. db1 (a lab host) or the name imported data carry
	Resource string `yaml:"resource"` // e.g. volume:data, disk:xvdf, cpu, net:eth0
	File     string `yaml:"file"`     // an ESL model file (docs/esl.md), relative to the spec
}

// ESLRules are analysis.esl.rules (seed-digest §4, interpretation).
type ESLRules struct {
	PersistentThreshold float64  `yaml:"persistent_threshold"` // default 70 (%)
	PersistentTCPTPct   float64  `yaml:"persistent_tcpt_pct"`  // default 50 (% of the covered time)
	TransientThreshold  float64  `yaml:"transient_threshold"`  // default 95 (%)
	TransientMCPT       Duration `yaml:"transient_mcpt"`       // default 60s
	OverProvisionedP99  float64  `yaml:"over_provisioned_p99"` // default 70 (%)
}

// ESLOptionA is analysis.esl.option_a.
type ESLOptionA struct {
	// IOPS is the provisioned IOPS a "provision more ops_per_s" finding
	// prices; default 6 x the current (seed 000 §5.2: 300 -> 1800), within
	// the volume type's limits.
	IOPS float64 `yaml:"iops"`
}

// ESLOptionB is analysis.esl.option_b.
type ESLOptionB struct {
	// MaxNodes is the largest scale-out cluster option B may take; default
	// 100.
	MaxNodes int `yaml:"max_nodes"`
}

// ESLPair is one entry of analysis.esl.pairs: two series written
// HOST/RESOURCE, optionally @SOURCE, e.g. db1/volume:vol-0a1b@cloudwatch.
type ESLPair struct {
	Provider string `yaml:"provider"`
	Client   string `yaml:"client"`
}

// ESL op size policies.
const (
	ESLOpSizeBest     = "best"
	ESLOpSizeObserved = "observed"
)

// DefaultESLThresholds are the critical thresholds when none are given.
var DefaultESLThresholds = []float64{70, 95}

// eslAnalysis checks analysis.esl. Model files are not read here: a
// stored spec must re-validate after its files are gone; assess reads
// them and says which one is missing.
func (c *checker) eslAnalysis(_ *Spec, a *ESLAnalysis) {
	const p = "analysis.esl"
	for i, t := range a.Thresholds {
		if !(t > 0) || math.IsInf(t, 0) {
			c.fail(fmt.Sprintf("%s.thresholds[%d]", p, i), "%v is not a threshold; give a positive SLP percentage such as 70 or 95", t)
		}
	}
	if a.OpSize != "" {
		c.oneOf(p+".op_size", a.OpSize, ESLOpSizeBest, ESLOpSizeObserved)
	}
	for i, d := range a.OpSizesKiB {
		if !(d > 0) || math.IsInf(d, 0) {
			c.fail(fmt.Sprintf("%s.op_sizes_kib[%d]", p, i), "%v is not an op size; give a positive size in KiB such as 4 or 256", d)
		}
	}
	seen := map[string]int{}
	for i, m := range a.Models {
		at := fmt.Sprintf("%s.models[%d]", p, i)
		switch {
		case m.Host == "":
			c.fail(at+".host", "required; name the host whose resource the model describes, e.g. db1")
		case m.Resource == "":
			c.fail(at+".resource", "required; name the resource, e.g. volume:data, cpu or net:eth0")
		case m.File == "":
			c.fail(at+".file", "required; give the path of an ESL model file (docs/esl.md)")
		default:
			key := m.Host + "/" + m.Resource
			if j, dup := seen[key]; dup {
				c.fail(at, "%s already has a model in models[%d]; give each host and resource one model", key, j)
			}
			seen[key] = i
		}
	}
	r := a.Rules
	for _, f := range []struct {
		name string
		v    float64
		max  float64
	}{{"persistent_threshold", r.PersistentThreshold, math.Inf(1)}, {"persistent_tcpt_pct", r.PersistentTCPTPct, 100},
		{"transient_threshold", r.TransientThreshold, math.Inf(1)}, {"over_provisioned_p99", r.OverProvisionedP99, math.Inf(1)}} {
		if f.v < 0 || f.v > f.max || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			c.fail(p+".rules."+f.name, "%v is out of range; give a percentage above 0%s, or leave it out for the default", f.v, maxText(f.max))
		}
	}
	c.notNegative(p+".rules.transient_mcpt", r.TransientMCPT)
	// base is checked by assess: treatments are parsed after this check.
	if a.Base != "" && !validName(a.Base) {
		c.fail(p+".base", "%q is not a treatment name; name one of the campaign's treatments, or leave it out for the first", a.Base)
	}
	if v := a.OptionA.IOPS; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		c.fail(p+".option_a.iops", "%v is not a number of IOPS; give a positive number, or leave it out for 6 x the current", v)
	}
	if n := a.OptionB.MaxNodes; n < 0 || n > maxOptionBNodes {
		c.fail(p+".option_b.max_nodes", "must be from 1 to %d, got %d (leave it out for 100)", maxOptionBNodes, n)
	}
	for i, pr := range a.Pairs {
		at := fmt.Sprintf("%s.pairs[%d]", p, i)
		for _, side := range []struct{ name, ref string }{{"provider", pr.Provider}, {"client", pr.Client}} {
			if side.ref == "" {
				c.fail(at+"."+side.name, "required; write the series as HOST/RESOURCE or HOST/RESOURCE@SOURCE")
				continue
			}
			if _, _, _, err := slp.ParseSeries(side.ref); err != nil {
				c.fail(at+"."+side.name, "%s", err.Error())
			}
		}
	}
}

func maxText(m float64) string {
	if math.IsInf(m, 1) {
		return ""
	}
	return fmt.Sprintf(" and at most %g", m)
}

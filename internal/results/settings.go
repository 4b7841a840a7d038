package results

// Analysis holds a treatment's analysis settings as stored. The field
// names are those of the spec's analysis: section (docs/spec.md), so the
// v1 reader decodes the stored YAML into these types directly, and the
// fact tables store them as JSON. Zero values mean "the analysis's
// default"; each analysis applies its own defaults.
type Analysis struct {
	Variability Variability `json:"variability" yaml:"variability"`
	ESL         ESL         `json:"esl" yaml:"esl"`
	Bottleneck  Bottleneck  `json:"bottleneck" yaml:"bottleneck"`
	Plan        Plan        `json:"plan" yaml:"plan"`         // plan.go
	Failures    Failures    `json:"failures" yaml:"failures"` // failures.go
}

// Variability is analysis.variability (seed 001's verdicts).
type Variability struct {
	Thresholds string            `json:"thresholds,omitempty" yaml:"thresholds"` // "" = relative unless repeat_se or cross_diff is set
	RepeatPct  float64           `json:"repeat_pct,omitempty" yaml:"repeat_pct"`
	CrossPct   float64           `json:"cross_pct,omitempty" yaml:"cross_pct"`
	Alpha      float64           `json:"alpha,omitempty" yaml:"alpha"`
	RepeatSE   Dur               `json:"repeat_se,omitempty" yaml:"repeat_se"`
	CrossDiff  Dur               `json:"cross_diff,omitempty" yaml:"cross_diff"`
	Trim       *Dur              `json:"trim,omitempty" yaml:"trim"` // nil = default
	Host       string            `json:"host,omitempty" yaml:"host"`
	Hosts      map[string]string `json:"hosts,omitempty" yaml:"hosts"`
	Equal      [][]string        `json:"equal,omitempty" yaml:"equal"`
	Policies   map[string]string `json:"policies,omitempty" yaml:"policies"`
}

// ESL is analysis.esl (seed 000's pressure analysis).
type ESL struct {
	Thresholds []float64  `json:"thresholds,omitempty" yaml:"thresholds"`
	OpSize     string     `json:"op_size,omitempty" yaml:"op_size"`
	OpSizesKiB []float64  `json:"op_sizes_kib,omitempty" yaml:"op_sizes_kib"`
	Models     []ESLModel `json:"models,omitempty" yaml:"models"`
	Rules      ESLRules   `json:"rules" yaml:"rules"`
	Base       string     `json:"base,omitempty" yaml:"base"`
	OptionA    ESLOptionA `json:"option_a" yaml:"option_a"`
	OptionB    ESLOptionB `json:"option_b" yaml:"option_b"`
	Pairs      []ESLPair  `json:"pairs,omitempty" yaml:"pairs"`
}

// ESLModel is one entry of analysis.esl.models: a host's resource whose
// ESL model comes from File (relative to the spec file).
type ESLModel struct {
	Host     string `json:"host" yaml:"host"`
	Resource string `json:"resource" yaml:"resource"`
	File     string `json:"file" yaml:"file"`
}

// ESLRules are analysis.esl.rules.
type ESLRules struct {
	PersistentThreshold float64 `json:"persistent_threshold,omitempty" yaml:"persistent_threshold"`
	PersistentTCPTPct   float64 `json:"persistent_tcpt_pct,omitempty" yaml:"persistent_tcpt_pct"`
	TransientThreshold  float64 `json:"transient_threshold,omitempty" yaml:"transient_threshold"`
	TransientMCPT       Dur     `json:"transient_mcpt,omitempty" yaml:"transient_mcpt"`
	OverProvisionedP99  float64 `json:"over_provisioned_p99,omitempty" yaml:"over_provisioned_p99"`
}

// ESLOptionA is analysis.esl.option_a.
type ESLOptionA struct {
	IOPS float64 `json:"iops,omitempty" yaml:"iops"`
}

// ESLOptionB is analysis.esl.option_b.
type ESLOptionB struct {
	MaxNodes int `json:"max_nodes,omitempty" yaml:"max_nodes"`
}

// ESLPair is one entry of analysis.esl.pairs.
type ESLPair struct {
	Provider string `json:"provider" yaml:"provider"`
	Client   string `json:"client" yaml:"client"`
}

// Bottleneck is analysis.bottleneck (seed 003's classification and
// intervention analysis).
type Bottleneck struct {
	Lambda      Dur            `json:"lambda,omitempty" yaml:"lambda"`
	Alpha       float64        `json:"alpha,omitempty" yaml:"alpha"`
	Epsilon     float64        `json:"epsilon,omitempty" yaml:"epsilon"`
	Full        float64        `json:"full,omitempty" yaml:"full"`
	Partial     float64        `json:"partial,omitempty" yaml:"partial"`
	PerCore     bool           `json:"per_core,omitempty" yaml:"per_core"`
	Hosts       []string       `json:"hosts,omitempty" yaml:"hosts"`
	SLOFloor    float64        `json:"slo_floor,omitempty" yaml:"slo_floor"`
	UtilFilter  float64        `json:"util_filter,omitempty" yaml:"util_filter"`
	StrictRules *bool          `json:"strict_rules,omitempty" yaml:"strict_rules"`
	Map         *BottleneckMap `json:"map,omitempty" yaml:"map"`
}

// StrictRulesOn reports whether rule A is kept for bounded metrics and
// rule B for unbounded ones (the default).
func (b Bottleneck) StrictRulesOn() bool { return b.StrictRules == nil || *b.StrictRules }

// BottleneckMap names the two configuration axes of the maps.
type BottleneckMap struct {
	X MapAxis `json:"x" yaml:"x"`
	Y MapAxis `json:"y" yaml:"y"`
}

// MapAxis is one axis: a field path whose value each treatment has
// (Treatment.Numbers), and its label.
type MapAxis struct {
	Path  string `json:"path" yaml:"path"`
	Label string `json:"label,omitempty" yaml:"label"`
}

package spec

import (
	"strings"
	"testing"
	"time"
)

func TestESLAnalysisDecodes(t *testing.T) {
	s, err := Parse("t.yaml", []byte(smallSpec+`analysis:
  esl:
    thresholds: [80, 99]
    op_size: observed
    op_sizes_kib: [8, 256]
    models:
      - {host: db1, resource: volume:data, file: esl-300.yaml}
      - {host: db1, resource: cpu, file: cpu.yaml}
    rules: {persistent_threshold: 80, persistent_tcpt_pct: 25, transient_mcpt: 30s}
    base: before
    option_a: {iops: 1800}
    option_b: {max_nodes: 20}
    pairs:
      - {provider: db1/volume:vol-0a1b@cloudwatch, client: db1/disk:xvdf}
`))
	if err != nil {
		t.Fatal(err)
	}
	a := s.Analysis.ESL
	if len(a.Thresholds) != 2 || a.Thresholds[1] != 99 || a.OpSize != "observed" || a.OpSizesKiB[0] != 8 || len(a.Models) != 2 ||
		a.Models[0].Resource != "volume:data" || a.Rules.PersistentTCPTPct != 25 || a.Rules.TransientMCPT.Duration != 30*time.Second ||
		a.OptionA.IOPS != 1800 || a.OptionB.MaxNodes != 20 || a.Base != "before" || a.Pairs[0].Client != "db1/disk:xvdf" {
		t.Errorf("decoded %+v", a)
	}
}

func TestESLAnalysisErrors(t *testing.T) {
	lines := parseErrors(t, smallSpec+`analysis:
  esl:
    thresholds: [0, 95]
    op_size: biggest
    op_sizes_kib: [-4]
    models:
      - {host: db1, resource: volume:data}
      - {host: db1, resource: cpu, file: a.yaml}
      - {host: db1, resource: cpu, file: b.yaml}
    rules: {persistent_tcpt_pct: 150}
    option_a: {iops: -1}
    option_b: {max_nodes: -2}
    pairs:
      - {provider: vol-0a1b, client: db1/disk:xvdf@}
`)
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"analysis.esl.thresholds[0]: 0 is not a threshold",
		`analysis.esl.op_size: unknown value "biggest"`,
		"analysis.esl.op_sizes_kib[0]: -4 is not an op size",
		"analysis.esl.models[0].file: required",
		"analysis.esl.models[2]: db1/cpu already has a model in models[1]",
		"analysis.esl.rules.persistent_tcpt_pct: 150 is out of range; give a percentage above 0 and at most 100",
		"analysis.esl.option_a.iops: -1 is not a number of IOPS",
		"analysis.esl.option_b.max_nodes: must be from 1 to 100000, got -2",
		`analysis.esl.pairs[0].provider: "vol-0a1b" is not a series; write HOST/RESOURCE`,
		`analysis.esl.pairs[0].client: "db1/disk:xvdf@" is not a series; write HOST/RESOURCE@SOURCE with both parts`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors lack %q:\n%s", want, got)
		}
	}
}

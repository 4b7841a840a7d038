package esl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Model gives the ESL of each quality it knows, possibly depending on the
// operation size (seed-digest §4: a volume's ESL at 4 KiB differs from its
// ESL at 1 MiB). Every model marshals to the YAML/JSON document that Parse
// reads back (docs/esl.md), so models can be stored in files and in the
// results store.
type Model interface {
	// Kind is the document's kind: "single", "distribution", "analytical"
	// or "empirical".
	Kind() string
	// Qualities lists the qualities the model describes, sorted.
	Qualities() []Quality
	// ESL is the expected service level of q for operations of opSizeKiB.
	// Models that do not depend on the size ignore it (pass 0).
	ESL(q Quality, opSizeKiB float64) (ESL, error)
}

// Kinds of model documents.
const (
	KindSingle       = "single"
	KindDistribution = "distribution"
	KindAnalytical   = "analytical"
	KindEmpirical    = "empirical"
)

// Load reads the model file at path (YAML, or JSON, which YAML reads too).
func Load(path string) (Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the ESL model file %s (%v); give the path of a YAML file", path, errors.Unwrap(err))
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads one model document. Unknown fields are errors, so a typo in
// a parameter name cannot silently fall back to a default.
func Parse(data []byte) (Model, error) {
	var head struct {
		Kind string `yaml:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, yamlError(err)
	}
	switch head.Kind {
	case KindSingle:
		var d singleDoc
		if err := strict(data, &d); err != nil {
			return nil, err
		}
		return NewSingleModel(d.Name, d.Qualities)
	case KindDistribution:
		var d distributionDoc
		if err := strict(data, &d); err != nil {
			return nil, err
		}
		return NewDistributionModel(d.Name, d.Qualities)
	case KindAnalytical:
		var d analyticalDoc
		if err := strict(data, &d); err != nil {
			return nil, err
		}
		if d.Model != ModelProvisionedIOPSName {
			return nil, fmt.Errorf("model %q is not an analytical model Headroom knows; use model: %s", d.Model, ModelProvisionedIOPSName)
		}
		return NewAnalytical(d.Name, d.Params)
	case KindEmpirical:
		var d empiricalDoc
		if err := strict(data, &d); err != nil {
			return nil, err
		}
		return newEmpirical(d)
	case "":
		return nil, fmt.Errorf("the ESL model has no kind; add kind: single, distribution, analytical or empirical")
	}
	return nil, fmt.Errorf("kind %q is not an ESL model kind; use single, distribution, analytical or empirical", head.Kind)
}

func strict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return yamlError(err)
	}
	return nil
}

// yamlError turns the decoder's error into one sentence.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if i := strings.Index(msg, "field "); i >= 0 && strings.Contains(msg, " not found in type ") {
			field := strings.TrimPrefix(msg[i:], "field ")
			field = field[:strings.Index(field, " not found")]
			msg = msg[:i] + "unknown field " + field + "; see docs/esl.md for the fields of this kind"
		}
		return errors.New(msg)
	}
	return fmt.Errorf("the ESL model is not valid YAML (%v)", strings.TrimPrefix(err.Error(), "yaml: "))
}

func sortedQualities[V any](m map[Quality]V) []Quality {
	qs := make([]Quality, 0, len(m))
	for q := range m {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i] < qs[j] })
	return qs
}

func unknownQuality(q Quality, known []Quality) error {
	names := make([]string, len(known))
	for i, k := range known {
		names[i] = string(k)
	}
	return fmt.Errorf("the model has no quality %q; it describes %s", q, strings.Join(names, ", "))
}

// SingleModel gives one fixed value per quality, whatever the op size.
type SingleModel struct {
	Name   string
	Values map[Quality]float64
}

type singleDoc struct {
	Kind      string              `yaml:"kind" json:"kind"`
	Name      string              `yaml:"name,omitempty" json:"name,omitempty"`
	Qualities map[Quality]float64 `yaml:"qualities" json:"qualities"`
}

// NewSingleModel validates values: at least one quality, each positive.
func NewSingleModel(name string, values map[Quality]float64) (*SingleModel, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("qualities is empty; give at least one quality and its expected level, e.g. ops_per_s: 300")
	}
	for _, q := range sortedQualities(values) {
		if q == "" {
			return nil, fmt.Errorf("a quality has an empty name; name it, e.g. ops_per_s")
		}
		if _, err := Single(values[q]); err != nil {
			return nil, fmt.Errorf("qualities.%s: %w", q, err)
		}
	}
	return &SingleModel{Name: name, Values: values}, nil
}

// Kind implements Model.
func (*SingleModel) Kind() string { return KindSingle }

// Qualities implements Model.
func (m *SingleModel) Qualities() []Quality { return sortedQualities(m.Values) }

// ESL implements Model; the op size is ignored.
func (m *SingleModel) ESL(q Quality, _ float64) (ESL, error) {
	v, ok := m.Values[q]
	if !ok {
		return ESL{}, unknownQuality(q, m.Qualities())
	}
	e, err := Single(v)
	e.Source = "single " + m.label()
	return e, err
}

func (m *SingleModel) label() string { return label(m.Name) }

func label(name string) string {
	if name == "" {
		return "model"
	}
	return "model " + name
}

func (m *SingleModel) doc() singleDoc {
	return singleDoc{Kind: KindSingle, Name: m.Name, Qualities: m.Values}
}

// MarshalJSON writes the model document.
func (m *SingleModel) MarshalJSON() ([]byte, error) { return json.Marshal(m.doc()) }

// MarshalYAML writes the model document.
func (m *SingleModel) MarshalYAML() (any, error) { return m.doc(), nil }

// DistributionModel gives one discrete distribution per quality, whatever
// the op size.
type DistributionModel struct {
	Name string
	ESLs map[Quality]ESL
}

type distributionDoc struct {
	Kind      string              `yaml:"kind" json:"kind"`
	Name      string              `yaml:"name,omitempty" json:"name,omitempty"`
	Qualities map[Quality][]Level `yaml:"qualities" json:"qualities"`
}

// NewDistributionModel validates and normalizes each quality's levels.
func NewDistributionModel(name string, levels map[Quality][]Level) (*DistributionModel, error) {
	if len(levels) == 0 {
		return nil, fmt.Errorf("qualities is empty; give at least one quality with a list of {level, freq}")
	}
	m := &DistributionModel{Name: name, ESLs: map[Quality]ESL{}}
	for _, q := range sortedQualities(levels) {
		if q == "" {
			return nil, fmt.Errorf("a quality has an empty name; name it, e.g. ops_per_s")
		}
		e, err := NewDistribution(levels[q])
		if err != nil {
			return nil, fmt.Errorf("qualities.%s: %w", q, err)
		}
		e.Source = "distribution " + label(name)
		m.ESLs[q] = e
	}
	return m, nil
}

// Kind implements Model.
func (*DistributionModel) Kind() string { return KindDistribution }

// Qualities implements Model.
func (m *DistributionModel) Qualities() []Quality { return sortedQualities(m.ESLs) }

// ESL implements Model; the op size is ignored.
func (m *DistributionModel) ESL(q Quality, _ float64) (ESL, error) {
	e, ok := m.ESLs[q]
	if !ok {
		return ESL{}, unknownQuality(q, m.Qualities())
	}
	return e, nil
}

func (m *DistributionModel) doc() distributionDoc {
	d := distributionDoc{Kind: KindDistribution, Name: m.Name, Qualities: map[Quality][]Level{}}
	for q, e := range m.ESLs {
		d.Qualities[q] = e.Levels
	}
	return d
}

// MarshalJSON writes the model document.
func (m *DistributionModel) MarshalJSON() ([]byte, error) { return json.Marshal(m.doc()) }

// MarshalYAML writes the model document.
func (m *DistributionModel) MarshalYAML() (any, error) { return m.doc(), nil }

// Analytical is a documentation-based model: a named formula with typed
// parameters. The only formula so far is the provisioned-IOPS volume
// (seed-digest §4); a new one is a new Go type with its own parameters and
// validation, not an expression in the file (docs/esl.md says why).
type Analytical struct {
	Name   string
	Volume ProvisionedIOPSVolume
}

type analyticalDoc struct {
	Kind   string                `yaml:"kind" json:"kind"`
	Name   string                `yaml:"name,omitempty" json:"name,omitempty"`
	Model  string                `yaml:"model" json:"model"`
	Params ProvisionedIOPSVolume `yaml:"params" json:"params"`
}

// NewAnalytical validates the volume parameters.
func NewAnalytical(name string, v ProvisionedIOPSVolume) (*Analytical, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return &Analytical{Name: name, Volume: v}, nil
}

// Kind implements Model.
func (*Analytical) Kind() string { return KindAnalytical }

// Qualities implements Model.
func (*Analytical) Qualities() []Quality { return []Quality{BytesPerS, OpsPerS} }

// ESL implements Model: the single value the formula gives for the size.
func (m *Analytical) ESL(q Quality, opSizeKiB float64) (ESL, error) {
	if q != OpsPerS && q != BytesPerS {
		return ESL{}, unknownQuality(q, m.Qualities())
	}
	x, err := m.Volume.Evaluate(opSizeKiB)
	if err != nil {
		return ESL{}, err
	}
	v := x.OpsPerS
	if q == BytesPerS {
		v = x.BytesPerS
	}
	e, err := Single(v)
	e.Source = fmt.Sprintf("analytical %s %s at %g KiB, limited by %s", ModelProvisionedIOPSName, label(m.Name), opSizeKiB, x.Limit)
	return e, err
}

func (m *Analytical) doc() analyticalDoc {
	return analyticalDoc{Kind: KindAnalytical, Name: m.Name, Model: ModelProvisionedIOPSName, Params: m.Volume}
}

// MarshalJSON writes the model document.
func (m *Analytical) MarshalJSON() ([]byte, error) { return json.Marshal(m.doc()) }

// MarshalYAML writes the model document.
func (m *Analytical) MarshalYAML() (any, error) { return m.doc(), nil }

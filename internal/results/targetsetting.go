package results

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// TargetSetting returns the value of a target option (a key of the spec's
// target: section, e.g. "block_size" of the disk target) as the named
// treatment had it, as written: the treatment's own setting of
// target.KEY, else the stored spec text's. Target options are the
// target's business, so the facts do not type them; like the schema-1
// reader, this reads the stored text leniently, without today's spec
// parser. ok is false when neither has it.
func (r *Results) TargetSetting(treatment, key string) (string, bool) {
	if t, ok := r.Treatment(treatment); ok {
		for _, s := range t.Set {
			if s.Path == "target."+key {
				return s.Value, true
			}
		}
	}
	var root map[string]any
	if strings.TrimSpace(r.campaign.SpecYAML) == "" || yaml.Unmarshal([]byte(r.campaign.SpecYAML), &root) != nil {
		return "", false
	}
	v, ok := mapAt(root, "target")[key]
	if !ok || v == nil {
		return "", false
	}
	return scalarText(v), true
}

package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/headroom-dev/headroom/internal/campaign"
	"github.com/headroom-dev/headroom/internal/spec"
)

// relativeLines say, for validate, what relative levels will do: a short
// probe first, then the fractions of the rate it finds; one line per
// treatment with such levels.
func relativeLines(s *spec.Spec) []string {
	if len(s.Treatments) == 0 {
		if l := relativeLine(s, ""); l != "" {
			return []string{l}
		}
		return nil
	}
	var out []string
	for _, t := range s.Treatments {
		if l := relativeLine(t.Spec, t.Name+": "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func relativeLine(s *spec.Spec, prefix string) string {
	r := s.Relative()
	if r == nil || s.SLO == nil {
		return ""
	}
	cfg := campaign.LevelProbeConfig(s)
	most := cfg.BaselineWindow + cfg.Window*time.Duration(cfg.MaxWindows)
	what := "levels"
	if r.Steps {
		what = "load"
	}
	return fmt.Sprintf("%s%s: %s; the probe (seed 004's, with the SLO p%s <= %v as its SLA) runs once after populating and before the first run, in %v windows, at most %v",
		prefix, what, r, strconv.FormatFloat(cfg.Percentile, 'f', -1, 64), cfg.Threshold, cfg.Window, most)
}

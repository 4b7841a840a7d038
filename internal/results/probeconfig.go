package results

import (
	"encoding/json"
	"time"

	"github.com/headroom-dev/headroom/internal/store"
)

// ProbeSettings is the part of a probe's stored parameters (its
// config_json) that analyses and reports read: which treatment it probed
// and the window and margin of its pass rule.
type ProbeSettings struct {
	Treatment string        // "" for a campaign without treatments
	Window    time.Duration // 0 when not recorded
	Margin    time.Duration // 0 when not recorded
}

// SettingsOf reads a probe's settings from its stored parameters. What
// does not read (an old or damaged config_json) stays at its zero value:
// it only loses labels, never the probe's results.
func SettingsOf(p Probe) ProbeSettings {
	var raw struct {
		Treatment string `json:"treatment"`
		Window    string `json:"window"`
		Margin    string `json:"margin"`
	}
	_ = json.Unmarshal([]byte(p.ConfigJSON), &raw)
	out := ProbeSettings{Treatment: raw.Treatment}
	out.Window, _ = time.ParseDuration(raw.Window)
	out.Margin, _ = time.ParseDuration(raw.Margin)
	return out
}

// ProbePercentiles are the percentiles of a probe window's
// ProbeWindow.Percentiles, in order.
var ProbePercentiles = store.ProbePercentiles

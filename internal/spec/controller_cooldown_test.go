package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestControllerCooldown(t *testing.T) {
	// Default: none, the seed's controller.
	s, err := Parse("ctl.yaml", []byte(controllerSpec+"controller: {kind: empirical, tier: {hosts: app}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Controller.Cooldown.Duration != 0 {
		t.Errorf("default cooldown %v, want 0", s.Controller.Cooldown.Duration)
	}
	// Shorter than the period, and longer than the measured phase, are
	// both legal; so is a cooldown on the HPA, which ignores it (a factor
	// on controller.kind shares the section).
	for _, extra := range []string{
		"controller: {kind: empirical, period: 5s, cooldown: 2s, tier: {hosts: app}}",
		"controller: {kind: empirical, period: 5s, cooldown: 2m, tier: {hosts: app}}",
		"controller: {kind: hpa, cooldown: 20s, tier: {hosts: app}}",
		"controller: {kind: empirical, cooldown: 0, tier: {hosts: app}}",
	} {
		if _, err := Parse("ctl.yaml", []byte(controllerSpec+extra+"\n")); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
	s, err = Parse("ctl.yaml", []byte(controllerSpec+"controller: {kind: empirical, cooldown: 20s, tier: {hosts: app}}\n"))
	if err != nil || s.Controller.Cooldown.Duration != 20*time.Second {
		t.Fatalf("cooldown: 20s: %v, %+v", err, s)
	}
	line := strings.Count(controllerSpec, "\n") + 3
	for _, tc := range []struct{ extra, want string }{
		{"controller:\n  kind: empirical\n  cooldown: -5s\n  tier: {hosts: app}",
			"controller.cooldown: -5s is negative; give 0 for no cool-down (the seed's behaviour) or how long to wait after an action, e.g. 30s"},
		{"controller:\n  kind: empirical\n  cooldown: 30\n  tier: {hosts: app}", "has no unit"},
	} {
		_, err := Parse("ctl.yaml", []byte(controllerSpec+tc.extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), fmt.Sprintf("ctl.yaml:%d", line)) {
			t.Errorf("%q: got %v, want %q at line %d", tc.extra, err, tc.want, line)
		}
	}
}

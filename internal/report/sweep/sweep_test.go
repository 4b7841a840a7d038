package sweep

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/results"
)

func TestText(t *testing.T) {
	plan := results.SweepPlan{Model: "open", From: 150, Step: 150, Levels: 3}
	tests := []struct {
		name   string
		levels []results.SweepVerdict
		want   string
		notes  int
	}{
		{"stopped", []results.SweepVerdict{{LevelIndex: 0, Level: 150}, {LevelIndex: 1, Level: 300, Saturated: true, Reasons: []string{"12% of requests failed (more than 1%)"}, Notes: []string{"n"}}},
			"saturated at 300 req/s (level 2 of at most 3, from 150 by 150): 12% of requests failed (more than 1%)", 1},
		{"cap", []results.SweepVerdict{{LevelIndex: 0, Level: 150}, {LevelIndex: 1, Level: 300}, {LevelIndex: 2, Level: 450}},
			"reached its cap at 450 req/s without saturating (3 levels from 150 by 150)", 0},
		{"unfinished", []results.SweepVerdict{{LevelIndex: 0, Level: 150}},
			"unfinished: 1 of at most 3 levels judged, up to 150 req/s, none saturated", 0},
		{"nothing yet", nil, "no level has been judged yet (from 150 by 150, at most 3 levels)", 0},
	}
	for _, tt := range tests {
		got, notes := Text(&results.Sweep{Plan: plan, Levels: tt.levels})
		if got != tt.want || len(notes) != tt.notes {
			t.Errorf("%s: %q with %d notes, want %q with %d", tt.name, got, len(notes), tt.want, tt.notes)
		}
	}
}

package page

import (
	"testing"

	"github.com/headroom-dev/headroom/internal/analysis/stats"
)

// A server time above the client's (mu = -106 µs, seen at low load) is
// measurement error, not a negative duration; the cell keeps the number.
func TestMuCell(t *testing.T) {
	c := MuCell(stats.Estimate{Mean: -106, SE: 12, N: 3})
	if c.Text != "within measurement error" || c.Value == nil || *c.Value != -106 || c.SE == nil || *c.SE != 12 {
		t.Errorf("negative mu: %+v", c)
	}
	if c := MuCell(stats.Estimate{Mean: 176, SE: 7, N: 3}); c.Text != latCell(stats.Estimate{Mean: 176, SE: 7, N: 3}).Text || c.Text == MuWithinError {
		t.Errorf("positive mu: %q", c.Text)
	}
	if c := MuCell(stats.Estimate{}); c.Text != "–" {
		t.Errorf("no server times: %q", c.Text)
	}
}

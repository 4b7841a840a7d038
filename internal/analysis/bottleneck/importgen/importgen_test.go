package importgen

import (
	"testing"
	"time"
)

// The scenario's design shows the class each window is named after, on
// the resources it saturates, and nothing elsewhere.
func TestFiveClassesDesign(t *testing.T) {
	s := FiveClasses(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 60, 1)
	for i, w := range s.Windows {
		got := s.Expected(i)
		for id, class := range got {
			_, designed := w.Saturated[id]
			switch {
			case designed && class != w.Class:
				t.Errorf("window %d (%s): %s is %s", i, w.Class, id, class)
			case !designed && class != None:
				t.Errorf("window %d (%s): %s, never saturated, is %s", i, w.Class, id, class)
			}
		}
		for k := 0; k < s.Seconds; k++ {
			for _, id := range s.Resources() {
				u := s.Util(id, i*s.Seconds+k)
				sat := w.Saturated[id] != nil && w.Saturated[id][k]
				if sat != (u > alpha) || u > 100 || u < 0 {
					t.Fatalf("window %d second %d: %s at %v%%, designed saturated %v", i, k, id, u, sat)
				}
			}
		}
	}
}

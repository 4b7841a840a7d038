package progress

import (
	"fmt"
	"time"
)

// Rows is how far a population got: rows loaded of all, the recent rate
// and the time left at that rate.
type Rows struct {
	Done, Total int64
	PerSecond   float64       // over the meter's last few seconds; 0 = not known yet
	Left        time.Duration // (Total - Done) / PerSecond; 0 when the rate is not known
}

// String is "3000/10000 rows, 850 rows/s, ETA 8.2s".
func (r Rows) String() string {
	s := fmt.Sprintf("%d/%d rows", r.Done, r.Total)
	if r.PerSecond > 0 {
		s += fmt.Sprintf(", %.0f rows/s", r.PerSecond)
		if r.Done < r.Total {
			s += ", ETA " + eta(r.Left)
		}
	}
	return s
}

// eta rounds a time left to what a reader needs: tenths of a second under
// ten seconds, whole seconds above.
func eta(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// RateWindow is how far back a RowMeter's rate looks: long enough to
// smooth a loader's batches, short enough to follow a volume that slows
// down part-way (its page cache filled, a checkpoint started).
const RateWindow = 5 * time.Second

// RowMeter turns a population's row counts into Rows: the rate is the
// rows loaded over the last RateWindow (from the start, until the
// population has run that long), and the time left assumes it holds.
type RowMeter struct {
	marks []rowMark // oldest first; marks[0] is at or before the window's start
}

type rowMark struct {
	at   time.Time
	done int64
}

// NewRowMeter starts a meter for a population that began at start with no
// rows.
func NewRowMeter(start time.Time) *RowMeter {
	return &RowMeter{marks: []rowMark{{at: start}}}
}

// At records that done of total rows are loaded at t and returns where the
// population stands.
func (m *RowMeter) At(t time.Time, done, total int64) Rows {
	m.marks = append(m.marks, rowMark{at: t, done: done})
	// Keep one mark at or before the window's start as the rate's base.
	cut := 0
	for cut+1 < len(m.marks) && !m.marks[cut+1].at.After(t.Add(-RateWindow)) {
		cut++
	}
	m.marks = m.marks[cut:]
	r := Rows{Done: done, Total: total}
	base := m.marks[0]
	if dt := t.Sub(base.at).Seconds(); dt > 0 && done > base.done {
		r.PerSecond = float64(done-base.done) / dt
		if left := total - done; left > 0 {
			r.Left = time.Duration(float64(left) / r.PerSecond * float64(time.Second))
		}
	}
	return r
}

package store

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Damaged is the error of a store whose rows cannot be true: a slot with
// two completed runs, a negative or non-finite count or rate, an interval
// that starts outside its run. Such a store is never rendered into numbers (Runs
// returns this error) nor written; Problems say what is wrong, one clause
// each, for the user to repair or restore the file.
type Damaged struct {
	Path     string
	Problems []string
}

// shownProblems is how many problems the message lists; the rest are
// counted.
const shownProblems = 5

func (d *Damaged) Error() string {
	shown, more := d.Problems, ""
	if len(shown) > shownProblems {
		more = fmt.Sprintf(" (and %d more)", len(shown)-shownProblems)
		shown = shown[:shownProblems]
	}
	return fmt.Sprintf("results database %s is damaged, so it is neither reported nor written: %s%s; restore it from a copy or repair those rows",
		d.Path, strings.Join(shown, "; "), more)
}

// Check reads the whole store for rows that cannot be true and returns a
// *Damaged naming them, nil when there are none, or the error that kept
// it from reading. A store found damaged is then refused for writing too.
func (s *Store) Check() error {
	d, err := s.check()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.damage = d
	s.mu.Unlock()
	if d != nil {
		return d
	}
	return nil
}

// damaged is the damage found when the store was opened (or last
// checked), as an error.
func (s *Store) damaged() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.damage != nil {
		return s.damage
	}
	return nil
}

// problemsPerCheck bounds the rows each check lists: enough to show the
// kind of damage without reading all of a badly damaged file into memory.
const problemsPerCheck = 20

// A stored count is a whole number >= 0 (SQLite keeps a value that does
// not fit a column's type as it was given, so the type is checked too); a
// stored rate or duration is a number >= 0 and finite (SQLite stores NaN
// as NULL, and +Inf compares above the largest double).
const (
	badCount = `(typeof(%[1]s) NOT IN ('integer', 'null') OR %[1]s < 0)`
	badRate  = `(typeof(%[1]s) NOT IN ('integer', 'real', 'null') OR %[1]s < 0 OR %[1]s > 1.7976931348623157e308)`
)

func (s *Store) check() (*Damaged, error) {
	const doing = "checking the store"
	var problems []string
	add := func(q string, args []any, n int, say func(vals []any) string) error {
		rows, err := s.db.Query(q+fmt.Sprintf(" LIMIT %d", problemsPerCheck), args...)
		if err != nil {
			return s.fail(doing, err)
		}
		defer rows.Close()
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return s.fail(doing, err)
			}
			problems = append(problems, say(vals))
		}
		if err := rows.Err(); err != nil {
			return s.fail(doing, err)
		}
		return nil
	}

	// Two completed runs of one slot: a report would keep one and hide
	// that the slot ran twice (two writers on one campaign).
	err := add(`SELECT treatment, slot, count(*), group_concat(id, ', ') FROM run WHERE status = ?
		GROUP BY treatment, slot HAVING count(*) > 1 ORDER BY min(id)`, []any{StatusCompleted}, 4,
		func(v []any) string {
			return fmt.Sprintf("slot %v%s has %v completed runs (runs %v)", v[1], ofTreatment(v[0]), v[2], v[3])
		})
	if err != nil {
		return nil, err
	}
	for _, c := range []struct{ col, bad string }{
		{"sent", badCount}, {"completed", badCount}, {"errors", badCount}, {"late", badCount},
		{"dropped", badCount}, {"unfinished", badCount},
		{"level", badRate}, {"measure_secs", badRate}, {"throughput", badRate}, {"client_cpu_pct", badRate},
	} {
		err := add(`SELECT id, `+c.col+` FROM run WHERE `+fmt.Sprintf(c.bad, c.col)+` ORDER BY id`, nil, 2,
			func(v []any) string { return fmt.Sprintf("run %v has %s %s", v[0], c.col, shown(v[1])) })
		if err != nil {
			return nil, err
		}
	}
	err = add(`SELECT id FROM run WHERE end_ns < start_ns ORDER BY id`, nil, 1,
		func(v []any) string { return fmt.Sprintf("run %v ends before it starts", v[0]) })
	if err != nil {
		return nil, err
	}
	for _, col := range []string{"count", "errors", "late", "dropped", "duration_ns"} {
		err := add(`SELECT run_id, phase, op, start_ns, `+col+` FROM interval WHERE `+fmt.Sprintf(badCount, col)+` ORDER BY run_id, start_ns`, nil, 5,
			func(v []any) string {
				return fmt.Sprintf("run %v's %v %v interval at %s has %s %s", v[0], v[1], v[2], shownNS(v[3]), col, shown(v[4]))
			})
		if err != nil {
			return nil, err
		}
	}
	err = add(`SELECT run_id, phase, op, start_ns, kind, count FROM interval_error WHERE `+fmt.Sprintf(badCount, "count")+` ORDER BY run_id, start_ns`, nil, 6,
		func(v []any) string {
			return fmt.Sprintf("run %v's %v %v interval at %s has %s error count %s", v[0], v[1], v[2], shownNS(v[3]), v[4], shown(v[5]))
		})
	if err != nil {
		return nil, err
	}
	// An interval starts inside its run. Only its start: the run's end is
	// stamped on another clock reading than the engine's intervals, and a
	// real last interval may end a few milliseconds after it.
	err = add(`SELECT i.run_id, i.phase, i.op, i.start_ns, r.start_ns, r.end_ns FROM interval i JOIN run r ON r.id = i.run_id
		WHERE i.start_ns < r.start_ns OR i.start_ns > r.end_ns ORDER BY i.run_id, i.start_ns`, nil, 6,
		func(v []any) string {
			return fmt.Sprintf("run %v's %v %v interval at %s starts outside the run (%s to %s)", v[0], v[1], v[2], shownNS(v[3]), shownNS(v[4]), shownNS(v[5]))
		})
	if err != nil {
		return nil, err
	}
	if len(problems) == 0 {
		return nil, nil
	}
	return &Damaged{Path: s.path, Problems: problems}, nil
}

func ofTreatment(t any) string {
	if name, ok := t.(string); ok && name != "" {
		return fmt.Sprintf(" of treatment %q", name)
	}
	return ""
}

// shown is a stored value as the user would type it.
func shown(v any) string {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) {
			return fmt.Sprintf("%+v", x)
		}
		return fmt.Sprint(x)
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("%q", x)
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

// shownNS is a stored unix-nanosecond time as a UTC instant.
func shownNS(v any) string {
	if ns, ok := v.(int64); ok {
		return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.000")
	}
	return shown(v)
}

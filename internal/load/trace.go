package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxTraceRows bounds a trace so that a wrong file (a log, a dump) fails
// quickly instead of filling memory.
const maxTraceRows = 1_000_000

// maxTraceTime is the latest time a trace row may have: far beyond any run,
// and well inside time.Duration's range.
const maxTraceTime = 1e7 // seconds (about 116 days)

// TraceError is a problem with one line of a trace file.
type TraceError struct {
	Line int // 1-based
	Msg  string
}

func (e *TraceError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ParseTrace reads a rate trace in CSV: one "time,rate" row per line, time
// in seconds since the start of the run and rate in requests per second,
// held until the next row's time (see Trace). Blank lines and lines starting
// with # are skipped, and the first row may name the columns (time,rate).
// Times must be strictly increasing and rates not negative. A problem is
// returned as a *TraceError naming the line.
func ParseTrace(r io.Reader) ([]TracePoint, error) {
	sc := bufio.NewScanner(r)
	var pts []TracePoint
	line, rows := 0, 0
	fail := func(format string, args ...any) error {
		return &TraceError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		rows++
		fields := strings.Split(text, ",")
		if len(fields) != 2 {
			return nil, fail("expected two fields, time,rate (seconds, requests per second), got %d", len(fields))
		}
		ts, rs := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		sec, terr := strconv.ParseFloat(ts, 64)
		rate, rerr := strconv.ParseFloat(rs, 64)
		if rows == 1 && terr != nil && rerr != nil {
			continue // the column names
		}
		switch {
		case terr != nil || math.IsNaN(sec):
			return nil, fail("time %q is not a number of seconds", clip(ts))
		case rerr != nil || math.IsNaN(rate):
			return nil, fail("rate %q is not a number of requests per second", clip(rs))
		case sec < 0:
			return nil, fail("time %s is negative; times are seconds since the start of the run", ts)
		case sec > maxTraceTime:
			return nil, fail("time %s is beyond %g seconds; times are seconds since the start of the run", clip(ts), float64(maxTraceTime))
		case rate < 0:
			return nil, fail("rate %s is negative; use 0 for a pause", rs)
		case math.IsInf(rate, 0):
			return nil, fail("rate %s is not a finite number of requests per second", rs)
		}
		at := time.Duration(math.Round(sec * 1e9))
		if n := len(pts); n > 0 && at <= pts[n-1].At {
			return nil, fail("time %s is not after the previous row's (%g s); times must increase from row to row", ts, pts[n-1].At.Seconds())
		}
		if len(pts) == maxTraceRows {
			return nil, fail("the trace has more than %d rows; use coarser steps", maxTraceRows)
		}
		pts = append(pts, TracePoint{At: at, Rate: rate})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &TraceError{Line: line + 1, Msg: "the line is too long for a time,rate row"}
		}
		return nil, err
	}
	if len(pts) == 0 {
		return nil, &TraceError{Line: max(line, 1), Msg: "the trace has no rows; write one time,rate row per line, e.g. 0,100"}
	}
	return pts, nil
}

// clip keeps a quoted field short in a message.
func clip(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

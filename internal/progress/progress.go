// Package progress shows a campaign's progress: a live bar on a terminal
// (level, repetition, phase, ETA; rows, rate and ETA while populating), or
// one line per run, and one every PopulateLineEvery while populating, when
// the output is a log file or CI console.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// State is where a campaign stands.
type State struct {
	Run, Runs           int // 1-based run number in execution order, and total
	LevelIndex, Levels  int // 1-based
	Level               string
	Repetition, Reps    int // 1-based
	Phase               string
	Done, Total         time.Duration // planned time completed and in all
	Throughput          float64       // last interval: successful requests/s
	P99                 time.Duration // last interval: p99 latency over all operations
	Late, Dropped, Errs int64         // so far in this run
	// Populate is how far the population got, while the phase is
	// "populate" and rows are loading; nil otherwise.
	Populate *Rows
}

// PopulateLineEvery is how often the line printer reports a population
// that is still loading.
const PopulateLineEvery = 10 * time.Second

// Reporter receives progress updates.
type Reporter interface {
	Update(State)
	// RunDone reports a finished run with a one-line verdict.
	RunDone(State, string)
	// Note prints one line of news (a lab step, a fault applied) without
	// disturbing the bar.
	Note(string)
	// Finish clears the bar.
	Finish()
}

// New returns a bar when w is a terminal and a line printer otherwise.
func New(w io.Writer) Reporter {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return newBar(f)
	}
	return NewLines(w, PopulateLineEvery)
}

// NewLines returns the line printer, reporting a population every
// populateEvery while it loads.
func NewLines(w io.Writer, populateEvery time.Duration) Reporter {
	return &lines{w: w, every: populateEvery}
}

// Quiet returns a reporter that shows nothing.
func Quiet() Reporter { return quiet{} }

type quiet struct{}

func (quiet) Update(State)          {}
func (quiet) RunDone(State, string) {}
func (quiet) Finish()               {}
func (quiet) Note(string)           {}

func describe(s State) string {
	if strings.HasPrefix(s.Phase, "populate") {
		if s.Populate != nil {
			return s.Phase + " · " + s.Populate.String()
		}
		return s.Phase
	}
	d := fmt.Sprintf("run %d/%d · level %d/%d (%s) · rep %d/%d · %s", s.Run, s.Runs, s.LevelIndex, s.Levels, s.Level, s.Repetition, s.Reps, s.Phase)
	if s.Phase == "warmup" || s.Phase == "measure" {
		d += fmt.Sprintf(" · %.0f ok/s p99 %v", s.Throughput, s.P99.Round(10*time.Microsecond))
		if s.Late+s.Dropped > 0 {
			d += fmt.Sprintf(" late %d dropped %d", s.Late, s.Dropped)
		}
		if s.Errs > 0 {
			d += fmt.Sprintf(" errors %d", s.Errs)
		}
	}
	return d
}

type bar struct {
	w io.Writer
	b *progressbar.ProgressBar
}

func newBar(w io.Writer) *bar {
	return &bar{w: w, b: progressbar.NewOptions64(1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

func (b *bar) Update(s State) {
	if total := s.Total.Milliseconds(); total > 0 && b.b.GetMax64() != total {
		b.b.ChangeMax64(total)
	}
	b.b.Describe(describe(s))
	_ = b.b.Set64(min(s.Done.Milliseconds(), s.Total.Milliseconds()))
}

// RunDone prints the run's verdict above the bar, so the terminal keeps a
// line per run.
func (b *bar) RunDone(s State, verdict string) {
	_ = b.b.Clear()
	fmt.Fprintf(b.w, "run %d/%d (level %d/%d, %s, rep %d/%d): %s\n", s.Run, s.Runs, s.LevelIndex, s.Levels, s.Level, s.Repetition, s.Reps, verdict)
	b.Update(s)
}

func (b *bar) Finish() { _ = b.b.Finish() }

func (b *bar) Note(line string) {
	_ = b.b.Clear()
	fmt.Fprintln(b.w, line)
}

// lines prints one line when a run starts and one when it ends, and a
// population's rows every so often.
type lines struct {
	w     io.Writer
	last  string
	t0    time.Time
	every time.Duration
	// The population under way: when it started, when its last line was
	// printed, and how many were.
	popStart, popLine time.Time
	popLines          int
}

func (l *lines) Update(s State) {
	now := time.Now()
	if l.t0.IsZero() {
		l.t0 = now
	}
	if s.Phase == "populate" {
		if s.Populate != nil {
			l.populating(now, *s.Populate)
			return
		}
		l.popStart, l.popLine, l.popLines = now, now, 0
	}
	key := fmt.Sprintf("%d/%s", s.Run, s.Phase)
	if key == l.last || (s.Phase != "populate" && s.Phase != "warmup") {
		return
	}
	l.last = key
	if s.Phase == "populate" {
		fmt.Fprintf(l.w, "populating the target...\n")
		return
	}
	fmt.Fprintf(l.w, "run %d/%d: level %d/%d (%s), repetition %d/%d, ETA %v\n",
		s.Run, s.Runs, s.LevelIndex, s.Levels, s.Level, s.Repetition, s.Reps, (s.Total - s.Done).Round(time.Second))
}

// populating prints the population's rows, rate and ETA once every
// l.every, and a closing line when it printed any.
func (l *lines) populating(now time.Time, r Rows) {
	if l.popStart.IsZero() {
		l.popStart, l.popLine = now, now
	}
	if r.Done >= r.Total {
		if l.popLines > 0 {
			took := now.Sub(l.popStart)
			fmt.Fprintf(l.w, "populate: %d rows in %v (%.0f rows/s)\n", r.Done, took.Round(100*time.Millisecond), float64(r.Done)/took.Seconds())
		}
		l.popStart, l.popLines = time.Time{}, 0
		return
	}
	if now.Sub(l.popLine) < l.every {
		return
	}
	l.popLine = now
	l.popLines++
	fmt.Fprintf(l.w, "populate: %s\n", r)
}

func (l *lines) RunDone(s State, verdict string) {
	fmt.Fprintf(l.w, "run %d/%d done: %s\n", s.Run, s.Runs, verdict)
}

func (l *lines) Finish() {}

func (l *lines) Note(line string) { fmt.Fprintln(l.w, line) }

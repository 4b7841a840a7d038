package importer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Sink receives parsed samples in batches of at most BatchSize. The
// slice is reused after Sink returns: copy what you keep.
type Sink func([]monitor.Sample) error

// BatchSize is the most samples Read hands to its sink at once.
const BatchSize = 4096

// Summary says what Read imported.
type Summary struct {
	Samples     int
	Hosts       []string  // every host, sorted
	Resources   []string  // every resource (of any host), sorted; at most maxResources
	First, Last time.Time // earliest and latest sample start
	// Warnings are things Read repaired and says so (a report repeated
	// at the same time, of which the later is kept), each naming the
	// file and the line or JSON path; at most maxWarnings, the rest
	// counted in MoreWarnings.
	Warnings     []string
	MoreWarnings int
}

const (
	maxWarnings  = 20
	maxResources = 10000
	// maxLine bounds the length of one line of text input, so that a
	// file without newlines cannot make Read hold all of it.
	maxLine = 1 << 20
)

// Times outside [minTime, maxTime) are refused: a sample's start is
// stored as Unix nanoseconds, which overflow beyond the year 2262, and
// no tool records data from before 1970.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// timeRangeMsg returns "" when t can be stored, else the sentence that
// says why not; text is the time as the input wrote it.
func timeRangeMsg(t time.Time, text string) string {
	if t.Before(minTime) || !t.Before(maxTime) {
		return fmt.Sprintf("expected a time between 1970-01-01 and 2200-01-01, got %q; correct the clock or the time in the file, or remove this entry", truncate(text, 60))
	}
	return ""
}

// msgEmpty is the message of an input with nothing but white space.
const msgEmpty = "is empty: there is no data to import"

// reader reads one format. Read calls read twice on the same value: once
// to check (p.emit false), once to emit; what the first reading learns
// (an interval, a host name) it keeps in the value for the second.
type reader interface {
	read(p *pass) error
}

func newReader(f Format) (reader, bool) {
	switch f {
	case FormatIostat:
		return &iostatReader{}, true
	case FormatSar:
		return &sarReader{}, true
	case FormatCloudWatch:
		return &cwReader{}, true
	case FormatPrometheus:
		return &promReader{}, true
	}
	return nil, false
}

// Read parses the input r in format f and hands its samples to sink in
// batches. Name is the file name used in errors.
//
// Read reads the input twice: a first pass finds every error and what a
// format must know before its first sample (iostat's interval, the host
// a Prometheus file names in its last scrape), and a second pass emits.
// So sink is called only for input that parses completely, and memory
// does not grow with the size of the input: it holds one iostat report,
// one CloudWatch result or two Prometheus scrapes at a time (CloudWatch
// also keeps the read/write op and time points it pairs into await).
// Samples reach sink in input order, not sorted by time.
func Read(f Format, name string, r io.ReadSeeker, opt Options, sink Sink) (Summary, error) {
	rd, ok := newReader(f)
	if !ok {
		return Summary{}, fmt.Errorf("%s: unknown import format %q (want one of %s)", name, f, formatList())
	}
	head, err := readHead(name, r)
	if err != nil {
		return Summary{}, err
	}
	if len(bytes.TrimLeft(head, " \t\r\n\ufeff")) == 0 {
		return Summary{}, &Error{Name: name, Format: f, Msg: msgEmpty}
	}
	var sum Summary
	for _, emit := range []bool{false, true} {
		if _, err := r.Seek(0, io.SeekStart); err != nil {
			return Summary{}, fmt.Errorf("%s: cannot read it again from the start: %w", name, err)
		}
		p := &pass{name: name, format: f, r: r, head: head, opt: opt, emit: emit, sink: sink, sum: &sum,
			hosts: map[string]bool{}, resources: map[string]bool{}}
		if err := rd.read(p); err != nil {
			return Summary{}, err
		}
		if err := p.flush(); err != nil {
			return Summary{}, err
		}
		if emit {
			p.finish()
		}
	}
	return sum, nil
}

// Sniff detects the format of the input from its beginning and rewinds
// it. It returns an *Error saying the input is empty when it holds only
// white space, and ok false when the format cannot be told.
func Sniff(name string, r io.ReadSeeker) (f Format, ok bool, err error) {
	head, err := readHead(name, r)
	if err != nil {
		return "", false, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return "", false, fmt.Errorf("%s: cannot read it again from the start: %w", name, err)
	}
	if len(bytes.TrimLeft(head, " \t\r\n\ufeff")) == 0 {
		return "", false, &Error{Name: name, Msg: msgEmpty}
	}
	f, ok = Detect(head)
	return f, ok, nil
}

// headSize is how much of the input Detect and messages look at. An input
// whose first headSize bytes are white space counts as empty.
const headSize = 64 << 10

func readHead(name string, r io.ReadSeeker) ([]byte, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: cannot read it from the start: %w", name, err)
	}
	head := make([]byte, headSize)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return head[:n], nil
}

// pass is one reading of the input.
type pass struct {
	name   string
	format Format
	r      io.ReadSeeker
	head   []byte // the first headSize bytes, for describe
	opt    Options
	emit   bool // false: check only; true: hand samples to sink
	sink   Sink
	buf    []monitor.Sample
	err    error // the sink's error, which ends the pass

	sum       *Summary
	hosts     map[string]bool
	resources map[string]bool
}

func (p *pass) add(s monitor.Sample) {
	if !p.emit || p.err != nil {
		return
	}
	p.buf = append(p.buf, s)
	sum := p.sum
	if sum.Samples == 0 || s.Start.Before(sum.First) {
		sum.First = s.Start
	}
	if sum.Samples == 0 || s.Start.After(sum.Last) {
		sum.Last = s.Start
	}
	sum.Samples++
	if !p.hosts[s.Host] && len(p.hosts) < maxResources {
		p.hosts[s.Host] = true
	}
	if !p.resources[s.Resource] && len(p.resources) < maxResources {
		p.resources[s.Resource] = true
	}
	if len(p.buf) >= BatchSize {
		p.err = p.flush()
	}
}

func (p *pass) flush() error {
	if p.err != nil {
		return p.err
	}
	if len(p.buf) == 0 || !p.emit {
		return nil
	}
	err := p.sink(p.buf)
	p.buf = p.buf[:0]
	return err
}

func (p *pass) finish() {
	for h := range p.hosts {
		p.sum.Hosts = append(p.sum.Hosts, h)
	}
	slices.Sort(p.sum.Hosts)
	for r := range p.resources {
		p.sum.Resources = append(p.sum.Resources, r)
	}
	slices.Sort(p.sum.Resources)
}

// warn records a repair in the summary; only the emitting pass does, so
// that each is said once.
func (p *pass) warn(line int, path, format string, args ...any) {
	if !p.emit {
		return
	}
	if len(p.sum.Warnings) >= maxWarnings {
		p.sum.MoreWarnings++
		return
	}
	e := &Error{Name: p.name, Line: line, Path: path, Format: p.format, Msg: fmt.Sprintf(format, args...)}
	p.sum.Warnings = append(p.sum.Warnings, e.Error())
}

func (p *pass) fail(line int, path, format string, args ...any) error {
	return &Error{Name: p.name, Line: line, Path: path, Format: p.format, Msg: fmt.Sprintf(format, args...)}
}

// lineAt returns the 1-based line of byte offset off by reading the
// input again from the start; it is for error messages only, after which
// the pass ends.
func (p *pass) lineAt(off int64) int {
	if off < 0 {
		off = 0
	}
	if _, err := p.r.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	br := bufio.NewReader(io.LimitReader(p.r, off))
	line := 1
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			line++
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return line
		}
	}
}

// lineOfValue returns the line of the JSON value that follows offset off,
// past white space and the comma before an array element (where a
// decoder stands before it decodes the element).
func (p *pass) lineOfValue(off int64) int {
	line := p.lineAt(off)
	br := bufio.NewReader(p.r) // lineAt left the input at off
	for {
		c, err := br.ReadByte()
		switch {
		case err != nil:
			return line
		case c == '\n':
			line++
		case c == ' ' || c == '\t' || c == '\r' || c == ',':
		default:
			return line
		}
	}
}

// sampler adds samples that share host and source.
type sampler struct {
	p      *pass
	host   string
	source string
}

// add adds one sample, dropping non-finite values (a division by a zero
// interval, NaN in a scrape) rather than letting them poison averages
// downstream.
func (s *sampler) add(resource, metric string, start time.Time, period time.Duration, v float64) {
	if v != v || v > maxFloat || v < -maxFloat {
		return
	}
	if s.p.err == nil {
		for _, name := range []string{s.host, resource} {
			if why := badName(name); why != "" {
				s.p.err = &Error{Name: s.p.name, Format: s.p.format, Msg: fmt.Sprintf("the name %s %s; the file is damaged or was edited (give --host to name the host)", quoteShort(name), why)}
				return
			}
		}
	}
	if s.p.emit && isShare(metric) && v > maxShare && s.p.err == nil {
		// A share of a device's or a CPU's time above 100% is no
		// measurement (sar with 500% user, iostat with 1e300% busy):
		// the file is refused (issue 36). Only the pass that emits has
		// the host and time to name; import stores a file in one
		// transaction, so nothing of it is kept.
		s.p.err = &Error{Name: s.p.name, Format: s.p.format, Msg: fmt.Sprintf("%s %s of host %s at %s is %v%%, more than all of the time there is; the file is damaged or was edited",
			resource, metric, s.host, start.UTC().Format(time.RFC3339), v)}
		return
	}
	s.p.add(monitor.Sample{
		Host: s.host, Resource: resource, Metric: metric,
		Start: start, Period: period, Value: v, Source: s.source,
	})
}

const maxFloat = 1.7976931348623157e308

// maxName bounds a host's or a resource's name: a device name of 50 MB
// made a 1.6 GB store (issue 36).
const maxName = 256

// badName says what is wrong with a host or resource name from a file,
// or "" when nothing is: names are stored and printed, so they are short
// and hold no control characters (ESC and BEL reached the terminal raw).
func badName(name string) string {
	switch {
	case len(name) > maxName:
		return fmt.Sprintf("is %d bytes long, more than the %d a host or device name may have", len(name), maxName)
	case strings.ContainsFunc(name, unicode.IsControl):
		return "holds control characters"
	}
	return ""
}

// CheckHostName returns the one-sentence reason a host name given by the
// user (import --host) cannot be stored, or nil.
func CheckHostName(name string) error {
	if why := badName(name); why != "" {
		return fmt.Errorf("--host %s %s; give a plain host name", quoteShort(name), why)
	}
	return nil
}

// quoteShort quotes name for a message, escaping control characters and
// cutting it to a readable length.
func quoteShort(name string) string {
	if len(name) > 40 {
		return strconv.Quote(name[:40]) + "..."
	}
	return strconv.Quote(name)
}

// maxShare is the most a share of time may read: 100%, and 1 point more
// for the rounding and timing of the tools that print it.
const maxShare = 101

// isShare reports whether metric is a share of a CPU's or a device's time
// (user_pct, util_pct, throttled_pct...), which cannot exceed 100%; a
// process's cpu_pct is of one core, and may.
func isShare(metric string) bool {
	return strings.HasSuffix(metric, "_pct") && metric != monitor.ProcCPUPct
}

// lines reads text input line by line with bounded memory.
type lines struct {
	p  *pass
	br *bufio.Reader
	n  int // number of the line last returned
	// cut is set when the last line returned ended at the end of the
	// input without a newline: a file that may have been cut short.
	cut bool
}

func newLines(p *pass) *lines {
	return &lines{p: p, br: bufio.NewReaderSize(p.r, 64<<10)}
}

// next returns the next line without its line end; ok is false at the
// end of the input. The slice is valid until the next call.
func (l *lines) next() (line []byte, ok bool, err error) {
	b, err := l.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// Longer than the buffer: gather up to maxLine.
		long := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= maxLine {
			b, err = l.br.ReadSlice('\n')
			long = append(long, b...)
		}
		if len(long) > maxLine {
			return nil, false, l.p.fail(l.n+1, "", "expected lines of at most 1 MiB in %s, got a longer one", formatTitle(l.p.format))
		}
		b = long
	}
	switch {
	case err == nil:
		l.n++
		return bytes.TrimRight(b, "\r\n"), true, nil
	case errors.Is(err, io.EOF):
		if len(b) == 0 {
			return nil, false, nil
		}
		l.n++
		l.cut = true
		return bytes.TrimRight(b, "\r"), true, nil
	default:
		return nil, false, fmt.Errorf("cannot read %s: %w", l.p.name, err)
	}
}

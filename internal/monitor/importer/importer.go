// Package importer turns resource data recorded by other tools into
// monitor.Samples, so that client latency can be compared with what the
// machine did, second by second (iostat, sar) or minute by minute
// (CloudWatch).
//
// Supported inputs, one file per format (see the doc comment of each
// parser for the exact shape):
//
//   - FormatIostat: `iostat -x -t -o JSON <interval> <count>` (sysstat);
//   - FormatSar: `sadf -d <file> -- -u -d -n DEV -r` (sysstat), several
//     report blocks in one file;
//   - FormatCloudWatch: `aws cloudwatch get-metric-data` JSON, with an
//     optional "Period";
//   - FormatPrometheus: node_exporter text exposition, several scrapes
//     separated by `# headroom-scrape-time: <unix ms>` comments.
//
// Every sample carries the interval it covers: Start is the beginning of
// the interval and Period its length (the tool's interval, CloudWatch's
// period or the time between two scrapes). Rates are per second.
//
// Read streams a file of any size to a sink in bounded memory; Parse is
// Read into a slice, sorted by time. Neither panics: malformed input
// yields an error of type *Error that names the file, the line (or the
// JSON path) and what was expected. Times outside 1970..2200 and negative
// values are refused; repairs (an iostat report repeated at one time) are
// said in Summary.Warnings.
package importer

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/monitor"
)

// Format names an input format.
type Format string

// Supported formats.
const (
	FormatIostat     Format = "iostat"
	FormatSar        Format = "sar"
	FormatCloudWatch Format = "cloudwatch"
	FormatPrometheus Format = "prometheus"
)

// Formats lists the supported formats.
func Formats() []Format {
	return []Format{FormatIostat, FormatSar, FormatCloudWatch, FormatPrometheus}
}

// DefaultHost is the host of imported samples when neither Options.Host
// nor the data names one.
const DefaultHost = "imported"

// Options tune Parse.
type Options struct {
	// Host overrides the host of every sample. When empty, the host comes
	// from the data (iostat nodename, sar hostname column, node_exporter
	// node_uname_info nodename, CloudWatch top-level "Host"), else
	// DefaultHost.
	Host string

	// Location interprets timestamps that carry no zone: sadf -d -T/-t
	// output and iostat -t output recorded without S_TIME_FORMAT=ISO.
	// Default time.Local.
	Location *time.Location

	// Time places data that carries no time of its own: the end of the
	// first report of iostat output recorded without -t (Interval is then
	// required too), or the time of a single Prometheus scrape that has no
	// marker comment and no sample timestamps (callers may pass the file's
	// modification time).
	Time time.Time

	// Interval is iostat's interval when the output has no timestamps
	// (recorded without -t), or when it holds a single report recorded
	// with -y.
	Interval time.Duration

	// IostatNoSinceBoot says that iostat ran with -y, so its first report
	// covers a normal interval. Without it the first report, which iostat
	// computes since boot, is dropped.
	IostatNoSinceBoot bool
}

func (o Options) location() *time.Location {
	if o.Location != nil {
		return o.Location
	}
	return time.Local
}

func (o Options) host(fromData string) string {
	if o.Host != "" {
		return o.Host
	}
	if fromData != "" {
		return fromData
	}
	return DefaultHost
}

// Parse reads data in format f. Name is the file name used in errors.
// Samples are returned ordered by Start; within one interval they keep
// the order of the input. Parse holds every sample in memory: for large
// files use Read, which hands samples to a sink in batches.
func Parse(f Format, name string, data []byte, opt Options) ([]monitor.Sample, error) {
	var out []monitor.Sample
	_, err := Read(f, name, bytes.NewReader(data), opt, func(s []monitor.Sample) error {
		out = append(out, s...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b monitor.Sample) int { return a.Start.Compare(b.Start) })
	return out, nil
}

func formatList() string {
	var s []string
	for _, f := range Formats() {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// formatTitle names a format's input in messages.
func formatTitle(f Format) string {
	switch f {
	case FormatIostat:
		return "iostat -x -o JSON output"
	case FormatSar:
		return "sadf -d output"
	case FormatCloudWatch:
		return "CloudWatch get-metric-data JSON"
	case FormatPrometheus:
		return "Prometheus text exposition"
	}
	return string(f)
}

// Error is a parse error. Line is 1-based and 0 when unknown; Path is a
// JSON path such as sysstat.hosts[0].statistics[2].timestamp.
type Error struct {
	Name   string
	Line   int
	Path   string
	Format Format
	Msg    string
}

func (e *Error) Error() string {
	if e.Msg == msgEmpty {
		return e.Name + " " + msgEmpty
	}
	var b strings.Builder
	b.WriteString(e.Name)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// describe says in a few words what data looks like, for "expected X,
// got Y" errors.
func describe(data []byte) string {
	if f, ok := Detect(data); ok {
		switch f {
		case FormatIostat:
			return "iostat JSON output"
		case FormatSar:
			return "sadf -d (sar) CSV output"
		case FormatCloudWatch:
			return "CloudWatch get-metric-data JSON"
		case FormatPrometheus:
			return "Prometheus text exposition"
		}
	}
	line := firstLine(data)
	switch {
	case line == "":
		return "empty input"
	case line[0] == '{' || line[0] == '[':
		return "JSON of another shape"
	case strings.Count(line, ";") >= 2 || strings.Count(line, ",") >= 2:
		return "a CSV line"
	default:
		return fmt.Sprintf("a line starting %q", truncate(line, 40))
	}
}

func firstLine(data []byte) string {
	for line := range strings.SplitSeq(string(data), "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// secondsToDuration converts seconds to a Duration, rejecting values that
// are not finite, not positive or absurdly large.
func secondsToDuration(s float64) (time.Duration, bool) {
	if math.IsNaN(s) || s <= 0 || s > 366*24*3600 {
		return 0, false
	}
	return time.Duration(math.Round(s * float64(time.Second))), true
}

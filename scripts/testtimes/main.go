// Command testtimes summarises the output of `go test -json`: which packages
// and which tests take the longest, and how many tests passed, failed or were
// skipped. It is for finding slow tests and for keeping the timing table in
// docs/testing.md up to date.
//
// Usage:
//
//	go test -json -count=1 ./... > test.json
//	go run ./scripts/testtimes -n 25 test.json
//	go run ./scripts/testtimes -markdown test.json >> docs/testing.md
//	go test -json ./... | go run ./scripts/testtimes
//
// With no file arguments it reads standard input; several files are each read
// as a separate run. It prints the packages, slowest first, with their elapsed
// seconds and test counts, then the -n slowest tests (subtests marked). With
// -markdown it prints only a Markdown table of the packages and a total row.
//
// Counts include subtests. Lines that are not JSON events (such as make echoing
// its commands) are ignored. Packages run in parallel may be interleaved. A
// package that failed to build is shown as "build failed". A test or package
// that started but never ended (the run was killed, so the file is truncated)
// is shown as "unfinished", timed from its start to the end of its package or,
// failing that, to the last event in the file.
//
// Streaming, for CI logs:
//
//	set -o pipefail
//	go test -json -count=1 ./... | go run ./scripts/testtimes -stream -save run.json
//
// With -stream it reads standard input as it comes and writes what plain
// `go test` would show, flushing each line: package-level output (the "ok",
// "FAIL" and "PASS" lines, build errors) and lines that are not JSON events
// are echoed at once; a test's output is held back and printed whole (its
// "--- FAIL" line included) when the test or subtest fails, and dropped when
// it passes or is skipped. A failing subtest's parents fail with it, so what
// they have printed so far comes first. When a package fails with tests that never ended
// (a panic or a timeout), their held output, which has the panic text, is
// printed before the package's FAIL line. Output for a test after it failed
// is printed at once. With -save every input line is also copied to the file
// as it is read, so a killed run keeps its record. At the end of the input it
// prints the report (with -markdown, the table) and a closing line
//
//	tests: N passed, N failed, N skipped
//
// and exits with status 1 if a test or package failed, did not build or did
// not finish (the input was cut short), 0 otherwise.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` output (see `go doc test2json`).
// ImportPath is set, instead of Package, on the build-output and build-fail
// events of newer Go versions.
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
	ImportPath  string
}

type pkgResult struct {
	Name             string
	Result           string // ok, FAIL, build failed, no tests, unfinished
	Elapsed          float64
	Pass, Fail, Skip int

	start, end  time.Time
	done        bool
	buildFailed bool
}

type testResult struct {
	Package, Name string
	Result        string // pass, fail, skip, unfinished
	Elapsed       float64

	start time.Time // of the run, or of the last cont for parallel tests
}

type summary struct {
	Packages []*pkgResult
	Tests    []*testResult
	Wall     float64 // seconds from first to last event, summed over files
}

// reader follows one `go test -json` stream, adding its packages and tests
// to a summary event by event.
type reader struct {
	s           *summary
	pkgs        map[string]*pkgResult
	running     map[[2]string]*testResult
	buildFails  []string
	failedBuild map[string]bool
	first, last time.Time
}

func (s *summary) newReader() *reader {
	return &reader{
		s:           s,
		pkgs:        map[string]*pkgResult{},
		running:     map[[2]string]*testResult{},
		failedBuild: map[string]bool{},
	}
}

// parseEvent decodes one line; ok is false for lines that are not events.
func parseEvent(line []byte) (e event, ok bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) || json.Unmarshal(line, &e) != nil {
		return event{}, false
	}
	return e, e.Action != ""
}

// add counts one event.
func (r *reader) add(e event) {
	s := r.s
	if !e.Time.IsZero() {
		if r.first.IsZero() {
			r.first = e.Time
		}
		r.last = e.Time
	}
	switch {
	case e.Action == "build-fail":
		r.buildFails = append(r.buildFails, e.ImportPath)
	case e.Package == "":
		// build-output, or something unknown: nothing to count.
	default:
		p := r.pkgs[e.Package]
		if p == nil || (p.done && e.Action == "start") {
			p = &pkgResult{Name: e.Package, start: e.Time}
			r.pkgs[e.Package] = p
			s.Packages = append(s.Packages, p)
		}
		if e.Test == "" {
			s.packageEvent(p, e, r.failedBuild)
		} else {
			s.testEvent(p, e, r.running)
		}
	}
}

// finish times what never ended and adds build failures whose package never
// reported, at the end of the stream.
func (r *reader) finish() {
	s := r.s
	for _, t := range r.running {
		end := r.last
		if p := r.pkgs[t.Package]; p.done {
			end = p.end
		}
		t.Elapsed = seconds(t.start, end)
	}
	for _, p := range r.pkgs {
		if !p.done {
			p.Result, p.Elapsed = "unfinished", seconds(p.start, r.last)
		}
	}
	// A build failure whose test package never reported (truncated run).
	for _, ip := range r.buildFails {
		name, _, _ := strings.Cut(ip, " ")
		if !r.failedBuild[ip] && r.pkgs[name] == nil {
			p := &pkgResult{Name: name, Result: "build failed", done: true}
			r.pkgs[name] = p
			s.Packages = append(s.Packages, p)
		}
	}
	s.Wall += seconds(r.first, r.last)
}

// read adds one `go test -json` stream to s.
func (s *summary) read(in io.Reader) error {
	r := s.newReader()
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if e, ok := parseEvent(line); ok {
			r.add(e)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	r.finish()
	return nil
}

func (s *summary) packageEvent(p *pkgResult, e event, failedBuild map[string]bool) {
	switch e.Action {
	case "output":
		if strings.Contains(e.Output, "[build failed]") || strings.Contains(e.Output, "[setup failed]") {
			p.buildFailed = true
		}
		return
	case "pass":
		p.Result = "ok"
	case "fail":
		p.Result = "FAIL"
		if e.FailedBuild != "" || p.buildFailed {
			p.Result = "build failed"
			failedBuild[e.FailedBuild] = true
		}
	case "skip":
		p.Result = "no tests"
	default:
		return
	}
	p.Elapsed, p.end, p.done = e.Elapsed, e.Time, true
}

func (s *summary) testEvent(p *pkgResult, e event, running map[[2]string]*testResult) {
	key := [2]string{e.Package, e.Test}
	t := running[key]
	switch e.Action {
	case "run":
		t = &testResult{Package: e.Package, Name: e.Test, Result: "unfinished", start: e.Time}
		running[key] = t
		s.Tests = append(s.Tests, t)
	case "cont":
		if t != nil {
			t.start = e.Time
		}
	case "pass", "fail", "skip":
		if t == nil { // its run event was lost
			t = &testResult{Package: e.Package, Name: e.Test}
			s.Tests = append(s.Tests, t)
		}
		delete(running, key)
		t.Result, t.Elapsed = e.Action, e.Elapsed
		switch e.Action {
		case "pass":
			p.Pass++
		case "fail":
			p.Fail++
		case "skip":
			p.Skip++
		}
	}
}

// chunk is a piece of a test's output; seq orders chunks across tests.
type chunk struct {
	seq  int
	text string
}

// streamPkg is what -stream holds back for one running package: the output
// of tests that have not passed, and how the ended tests ended.
type streamPkg struct {
	held  map[string][]chunk // by test
	ended map[string]string  // test -> pass, fail or skip
}

// streamer echoes a `go test -json` stream as plain `go test` output.
type streamer struct {
	out     *bufio.Writer
	pkgs    map[string]*streamPkg
	seq     int
	lineEnd bool // the last byte written was a newline, or nothing was written
}

func (st *streamer) write(text string) {
	if text != "" {
		st.out.WriteString(text)
		st.lineEnd = strings.HasSuffix(text, "\n")
	}
}

func (st *streamer) pkg(name string) *streamPkg {
	sp := st.pkgs[name]
	if sp == nil {
		sp = &streamPkg{held: map[string][]chunk{}, ended: map[string]string{}}
		st.pkgs[name] = sp
	}
	return sp
}

// flushHeld prints, in the order it came, all the output still held for a
// package: that of tests which never ended (after a panic or a timeout the
// panic text is there) and any that came after a test passed.
func (st *streamer) flushHeld(sp *streamPkg) {
	var all []chunk
	for name, cs := range sp.held {
		all = append(all, cs...)
		delete(sp.held, name)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	for _, c := range all {
		st.write(c.text)
	}
}

// event prints what e shows of the run: package-level output at once, a test's
// output only if the test fails.
func (st *streamer) event(e event) {
	if e.Package == "" || e.Test == "" {
		if e.Action == "output" || e.Action == "build-output" {
			if e.Package != "" && strings.HasPrefix(e.Output, "FAIL") {
				// The package's closing FAIL line: the output of tests that
				// never ended goes before it, as plain `go test` shows it.
				st.flushHeld(st.pkg(e.Package))
			}
			st.write(e.Output)
		}
		if e.Package != "" && e.Test == "" {
			switch e.Action {
			case "fail":
				st.flushHeld(st.pkg(e.Package))
				delete(st.pkgs, e.Package)
			case "pass", "skip":
				delete(st.pkgs, e.Package)
			}
		}
		return
	}
	sp := st.pkg(e.Package)
	switch e.Action {
	case "run":
		delete(sp.ended, e.Test) // run again (-count)
	case "output":
		if sp.ended[e.Test] == "fail" {
			st.write(e.Output)
			return
		}
		st.seq++
		sp.held[e.Test] = append(sp.held[e.Test], chunk{st.seq, e.Output})
	case "fail":
		// A failed subtest fails its parents too: their output so far goes
		// first, so the test reads in the order it ran.
		var cs []chunk
		for i, name := range e.Test {
			if name == '/' {
				cs = append(cs, sp.held[e.Test[:i]]...)
				delete(sp.held, e.Test[:i])
			}
		}
		cs = append(cs, sp.held[e.Test]...)
		sort.Slice(cs, func(i, j int) bool { return cs[i].seq < cs[j].seq })
		for _, c := range cs {
			st.write(c.text)
		}
		fallthrough
	case "pass", "skip":
		delete(sp.held, e.Test)
		sp.ended[e.Test] = e.Action
	}
}

// stream reads a `go test -json` stream from in as it comes and writes to out
// what plain `go test` would show (see the package comment), then the report
// (the text one, or with markdown the table) and a closing line of test
// counts. Each input line is copied to save, if not nil, as it is read. failed
// reports whether a test or package failed, did not finish or did not build.
// A read error, or the first error writing to save, ends the stream or the
// saving, and is returned after the report.
func (s *summary) stream(in io.Reader, out, save io.Writer, n int, markdown bool) (failed bool, err error) {
	r := s.newReader()
	st := &streamer{out: bufio.NewWriter(out), pkgs: map[string]*streamPkg{}, lineEnd: true}
	br := bufio.NewReader(in)
	for {
		line, rerr := br.ReadBytes('\n')
		if save != nil && len(line) > 0 {
			if _, werr := save.Write(line); werr != nil {
				err = fmt.Errorf("saving the stream: %w", werr)
				save = nil
			}
		}
		if e, ok := parseEvent(line); ok {
			r.add(e)
			st.event(e)
		} else {
			st.write(string(line))
		}
		st.out.Flush()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			if err == nil {
				err = rerr
			}
			break
		}
	}
	r.finish()

	if !st.lineEnd {
		st.write("\n")
	}
	st.write("\n")
	s.sortSlowest()
	if markdown {
		s.writeMarkdown(st.out)
	} else {
		s.writeText(st.out, n)
	}
	_, pass, fail, skip := s.totals()
	fmt.Fprintf(st.out, "\ntests: %d passed, %d failed, %d skipped\n", pass, fail, skip)
	st.out.Flush()

	failed = fail > 0
	for _, p := range s.Packages {
		if p.Result != "ok" && p.Result != "no tests" {
			failed = true
		}
	}
	for _, t := range s.Tests {
		if t.Result == "fail" {
			failed = true
		}
	}
	return failed, err
}

func seconds(from, to time.Time) float64 {
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return 0
	}
	return to.Sub(from).Seconds()
}

// sortSlowest orders packages and tests by elapsed time, slowest first.
func (s *summary) sortSlowest() {
	sort.SliceStable(s.Packages, func(i, j int) bool {
		a, b := s.Packages[i], s.Packages[j]
		if a.Elapsed != b.Elapsed {
			return a.Elapsed > b.Elapsed
		}
		return a.Name < b.Name
	})
	sort.SliceStable(s.Tests, func(i, j int) bool {
		a, b := s.Tests[i], s.Tests[j]
		if a.Elapsed != b.Elapsed {
			return a.Elapsed > b.Elapsed
		}
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		return a.Name < b.Name
	})
}

func (s *summary) totals() (secs float64, pass, fail, skip int) {
	for _, p := range s.Packages {
		secs += p.Elapsed
		pass += p.Pass
		fail += p.Fail
		skip += p.Skip
	}
	return
}

// writeText prints the package table, the n slowest tests and, if any, all
// unfinished tests.
func (s *summary) writeText(w io.Writer, n int) {
	fmt.Fprintf(w, "packages, slowest first (%d)\n", len(s.Packages))
	fmt.Fprintf(w, "%9s  %-12s %5s %5s %5s  %s\n", "seconds", "result", "pass", "fail", "skip", "package")
	for _, p := range s.Packages {
		fmt.Fprintf(w, "%9.3f  %-12s %5d %5d %5d  %s\n", p.Elapsed, p.Result, p.Pass, p.Fail, p.Skip, p.Name)
	}
	secs, pass, fail, skip := s.totals()
	fmt.Fprintf(w, "%9.3f  %-12s %5d %5d %5d  (wall %.3fs)\n", secs, "total", pass, fail, skip, s.Wall)

	tests := s.Tests[:min(n, len(s.Tests))]
	fmt.Fprintf(w, "\nslowest tests (%d of %d)\n", len(tests), len(s.Tests))
	writeTests(w, tests)

	var unfinished []*testResult
	for _, t := range s.Tests {
		if t.Result == "unfinished" {
			unfinished = append(unfinished, t)
		}
	}
	if len(unfinished) > 0 {
		fmt.Fprintf(w, "\nunfinished tests (%d)\n", len(unfinished))
		writeTests(w, unfinished)
	}
}

func writeTests(w io.Writer, tests []*testResult) {
	width := len("package")
	for _, t := range tests {
		width = max(width, len(t.Package))
	}
	fmt.Fprintf(w, "%9s  %-10s  %-7s  %-*s  %s\n", "seconds", "result", "kind", width, "package", "test")
	for _, t := range tests {
		kind := "test"
		if strings.Contains(t.Name, "/") {
			kind = "subtest"
		}
		fmt.Fprintf(w, "%9.3f  %-10s  %-7s  %-*s  %s\n", t.Elapsed, t.Result, kind, width, t.Package, t.Name)
	}
}

// writeMarkdown prints one table row per package, slowest first, and a total row.
func (s *summary) writeMarkdown(w io.Writer) {
	fmt.Fprintln(w, "| package | seconds | tests passed | failed | skipped |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: |")
	for _, p := range s.Packages {
		name := "`" + p.Name + "`"
		if p.Result != "ok" {
			name += " (" + p.Result + ")"
		}
		fmt.Fprintf(w, "| %s | %.2f | %d | %d | %d |\n", name, p.Elapsed, p.Pass, p.Fail, p.Skip)
	}
	secs, pass, fail, skip := s.totals()
	fmt.Fprintf(w, "| **total** (%d packages) | %.2f | %d | %d | %d |\n", len(s.Packages), secs, pass, fail, skip)
}

func main() {
	n := flag.Int("n", 20, "how many of the slowest tests to list")
	markdown := flag.Bool("markdown", false, "print only a Markdown table of the packages")
	stream := flag.Bool("stream", false, "read standard input as it comes, showing it as plain go test output, then the report")
	save := flag.String("save", "", "with -stream, copy the input to `file` as it comes")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: testtimes [-n 20] [-markdown] [file.json ...]  (stdin if no file)")
		fmt.Fprintln(flag.CommandLine.Output(), "       testtimes -stream [-save file.json] [-n 20] [-markdown]  (stdin)")
		flag.PrintDefaults()
	}
	flag.Parse()

	var s summary
	if *stream {
		if flag.NArg() > 0 {
			fmt.Fprintln(os.Stderr, "testtimes: -stream reads standard input only")
			flag.Usage()
			os.Exit(2)
		}
		var saveTo io.Writer
		if *save != "" {
			f, err := os.Create(*save)
			if err != nil {
				fmt.Fprintln(os.Stderr, "testtimes:", err)
				os.Exit(1)
			}
			saveTo = f
		}
		failed, err := s.stream(os.Stdin, os.Stdout, saveTo, *n, *markdown)
		if f, ok := saveTo.(*os.File); ok {
			if cerr := f.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("saving the stream: %w", cerr)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			failed = true
		}
		if failed {
			os.Exit(1)
		}
		return
	}
	if *save != "" {
		fmt.Fprintln(os.Stderr, "testtimes: -save needs -stream")
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() == 0 {
		if err := s.read(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			os.Exit(1)
		}
	}
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err == nil {
			err = s.read(f)
			f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testtimes:", err)
			os.Exit(1)
		}
	}
	s.sortSlowest()
	if *markdown {
		s.writeMarkdown(os.Stdout)
	} else {
		s.writeText(os.Stdout, *n)
	}
}

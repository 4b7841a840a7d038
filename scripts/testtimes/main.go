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

// read adds one `go test -json` stream to s.
func (s *summary) read(r io.Reader) error {
	pkgs := map[string]*pkgResult{}
	running := map[[2]string]*testResult{}
	var buildFails []string
	failedBuild := map[string]bool{}
	var first, last time.Time

	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		var e event
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) && json.Unmarshal(line, &e) == nil && e.Action != "" {
			if !e.Time.IsZero() {
				if first.IsZero() {
					first = e.Time
				}
				last = e.Time
			}
			switch {
			case e.Action == "build-fail":
				buildFails = append(buildFails, e.ImportPath)
			case e.Package == "":
				// build-output, or something unknown: nothing to count.
			default:
				p := pkgs[e.Package]
				if p == nil || (p.done && e.Action == "start") {
					p = &pkgResult{Name: e.Package, start: e.Time}
					pkgs[e.Package] = p
					s.Packages = append(s.Packages, p)
				}
				if e.Test == "" {
					s.packageEvent(p, e, failedBuild)
				} else {
					s.testEvent(p, e, running)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}

	for _, t := range running {
		end := last
		if p := pkgs[t.Package]; p.done {
			end = p.end
		}
		t.Elapsed = seconds(t.start, end)
	}
	for _, p := range pkgs {
		if !p.done {
			p.Result, p.Elapsed = "unfinished", seconds(p.start, last)
		}
	}
	// A build failure whose test package never reported (truncated run).
	for _, ip := range buildFails {
		name, _, _ := strings.Cut(ip, " ")
		if !failedBuild[ip] && pkgs[name] == nil {
			p := &pkgResult{Name: name, Result: "build failed", done: true}
			pkgs[name] = p
			s.Packages = append(s.Packages, p)
		}
	}
	s.Wall += seconds(first, last)
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
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: testtimes [-n 20] [-markdown] [file.json ...]  (stdin if no file)")
		flag.PrintDefaults()
	}
	flag.Parse()

	var s summary
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

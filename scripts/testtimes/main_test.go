package main

import (
	"strings"
	"testing"
)

// parallel: m/a and m/b run at the same time and their events interleave;
// m/b fails, m/a has a subtest and a skipped test; m/c fails to build (newer
// Go: build-output/build-fail events and FailedBuild), m/d fails to build the
// old way (only a "[build failed]" line), m/e has no test files. Lines from
// make and plain `go test` output are mixed in.
const parallel = `go test -json -count=1 ./...
{"ImportPath":"m/c [m/c.test]","Action":"build-output","Output":"# m/c [m/c.test]\n"}
{"ImportPath":"m/c [m/c.test]","Action":"build-output","Output":"c_test.go:3:2: undefined: x\n"}
{"ImportPath":"m/c [m/c.test]","Action":"build-fail"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/a"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/b"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"run","Package":"m/a","Test":"TestA1"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"run","Package":"m/b","Test":"TestB1"}
{"Time":"2024-01-01T00:00:00.2Z","Action":"run","Package":"m/a","Test":"TestA1/sub"}
{"Time":"2024-01-01T00:00:00.2Z","Action":"output","Package":"m/a","Test":"TestA1/sub","Output":"=== RUN   TestA1/sub\n"}
{"Time":"2024-01-01T00:00:01.2Z","Action":"pass","Package":"m/a","Test":"TestA1/sub","Elapsed":1}
{"Time":"2024-01-01T00:00:01.3Z","Action":"output","Package":"m/b","Test":"TestB1","Output":"--- FAIL: TestB1 (1.20s)\n"}
{"Time":"2024-01-01T00:00:01.3Z","Action":"fail","Package":"m/b","Test":"TestB1","Elapsed":1.2}
{"Time":"2024-01-01T00:00:01.4Z","Action":"pass","Package":"m/a","Test":"TestA1","Elapsed":1.3}
{"Time":"2024-01-01T00:00:01.4Z","Action":"run","Package":"m/a","Test":"TestA2"}
{"Time":"2024-01-01T00:00:01.5Z","Action":"skip","Package":"m/a","Test":"TestA2","Elapsed":0.1}
{"Time":"2024-01-01T00:00:01.6Z","Action":"pass","Package":"m/a","Elapsed":1.6}
ok  	m/a	1.600s
{"Time":"2024-01-01T00:00:01.7Z","Action":"fail","Package":"m/b","Elapsed":1.7}
{"Time":"2024-01-01T00:00:01.8Z","Action":"start","Package":"m/c"}
{"Time":"2024-01-01T00:00:01.8Z","Action":"output","Package":"m/c","Output":"FAIL\tm/c [build failed]\n"}
{"Time":"2024-01-01T00:00:01.8Z","Action":"fail","Package":"m/c","Elapsed":0,"FailedBuild":"m/c [m/c.test]"}
{"Time":"2024-01-01T00:00:01.8Z","Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}
{"Time":"2024-01-01T00:00:01.8Z","Action":"fail","Package":"m/d","Elapsed":0}
{"Time":"2024-01-01T00:00:01.8Z","Action":"start","Package":"m/e"}
{"Time":"2024-01-01T00:00:01.8Z","Action":"skip","Package":"m/e","Elapsed":0}
make: *** [test] Error 1
`

// truncated: the run was killed at 00:10. TestHang and its subtest never
// end (9 s and 7 s before the last event); the parallel TestP is timed from
// its cont (5 s); m/z ended although TestCrash did not (2 s, up to the end of
// m/z); m/y only started; m/w's build failed but its package never reported.
// The last line is cut off.
const truncated = `{"ImportPath":"m/w [m/w.test]","Action":"build-fail"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/x"}
{"Time":"2024-01-01T00:00:01Z","Action":"run","Package":"m/x","Test":"TestHang"}
{"Time":"2024-01-01T00:00:02Z","Action":"run","Package":"m/x","Test":"TestP"}
{"Time":"2024-01-01T00:00:02Z","Action":"pause","Package":"m/x","Test":"TestP"}
{"Time":"2024-01-01T00:00:03Z","Action":"run","Package":"m/x","Test":"TestHang/case"}
{"Time":"2024-01-01T00:00:04Z","Action":"run","Package":"m/x","Test":"TestQuick"}
{"Time":"2024-01-01T00:00:04.5Z","Action":"pass","Package":"m/x","Test":"TestQuick","Elapsed":0.5}
{"Time":"2024-01-01T00:00:05Z","Action":"cont","Package":"m/x","Test":"TestP"}
{"Time":"2024-01-01T00:00:06Z","Action":"start","Package":"m/z"}
{"Time":"2024-01-01T00:00:06Z","Action":"run","Package":"m/z","Test":"TestCrash"}
{"Time":"2024-01-01T00:00:08Z","Action":"fail","Package":"m/z","Elapsed":2}
{"Time":"2024-01-01T00:00:10Z","Action":"start","Package":"m/y"}
{"Time":"2024-01-01T00:00:10.5Z","Action":"output","Package":"m/y","Outp`

func run(t *testing.T, markdown bool, n int, inputs ...string) string {
	t.Helper()
	var s summary
	for _, in := range inputs {
		if err := s.read(strings.NewReader(in)); err != nil {
			t.Fatal(err)
		}
	}
	s.sortSlowest()
	var b strings.Builder
	if markdown {
		s.writeMarkdown(&b)
	} else {
		s.writeText(&b, n)
	}
	return b.String()
}

func check(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestParallel(t *testing.T) {
	check(t, run(t, false, 3, parallel), `packages, slowest first (5)
  seconds  result        pass  fail  skip  package
    1.700  FAIL             0     1     0  m/b
    1.600  ok               2     0     1  m/a
    0.000  build failed     0     0     0  m/c
    0.000  build failed     0     0     0  m/d
    0.000  no tests         0     0     0  m/e
    3.300  total            2     1     1  (wall 1.800s)

slowest tests (3 of 4)
  seconds  result      kind     package  test
    1.300  pass        test     m/a      TestA1
    1.200  fail        test     m/b      TestB1
    1.000  pass        subtest  m/a      TestA1/sub
`)
}

func TestMarkdown(t *testing.T) {
	check(t, run(t, true, 20, parallel), "| package | seconds | tests passed | failed | skipped |\n"+
		"| --- | ---: | ---: | ---: | ---: |\n"+
		"| `m/b` (FAIL) | 1.70 | 0 | 1 | 0 |\n"+
		"| `m/a` | 1.60 | 2 | 0 | 1 |\n"+
		"| `m/c` (build failed) | 0.00 | 0 | 0 | 0 |\n"+
		"| `m/d` (build failed) | 0.00 | 0 | 0 | 0 |\n"+
		"| `m/e` (no tests) | 0.00 | 0 | 0 | 0 |\n"+
		"| **total** (5 packages) | 3.30 | 2 | 1 | 1 |\n")
}

func TestTruncated(t *testing.T) {
	check(t, run(t, false, 20, truncated), `packages, slowest first (4)
  seconds  result        pass  fail  skip  package
   10.000  unfinished       1     0     0  m/x
    2.000  FAIL             0     0     0  m/z
    0.000  build failed     0     0     0  m/w
    0.000  unfinished       0     0     0  m/y
   12.000  total            1     0     0  (wall 10.000s)

slowest tests (5 of 5)
  seconds  result      kind     package  test
    9.000  unfinished  test     m/x      TestHang
    7.000  unfinished  subtest  m/x      TestHang/case
    5.000  unfinished  test     m/x      TestP
    2.000  unfinished  test     m/z      TestCrash
    0.500  pass        test     m/x      TestQuick

unfinished tests (4)
  seconds  result      kind     package  test
    9.000  unfinished  test     m/x      TestHang
    7.000  unfinished  subtest  m/x      TestHang/case
    5.000  unfinished  test     m/x      TestP
    2.000  unfinished  test     m/z      TestCrash
`)
}

// Several files are separate runs: a package seen in both is listed twice and
// the wall times add up.
func TestSeveralFiles(t *testing.T) {
	got := run(t, true, 20, parallel, truncated, parallel)
	if !strings.Contains(got, "| **total** (14 packages) | 18.60 | 5 | 2 | 2 |\n") {
		t.Errorf("unexpected total in:\n%s", got)
	}
}

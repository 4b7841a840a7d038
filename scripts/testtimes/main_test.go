package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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

// live: m/a and m/b interleave. m/a's TestPass logs (hidden) and passes,
// TestTable's subtest "bad" fails (shown, with its parent's lines so far)
// while "good" passes (hidden). m/b's TestOK passes, then TestHang panics
// without ending (shown before m/b's FAIL line). m/c fails to build. make
// adds a line that is not JSON.
const live = `{"ImportPath":"m/c [m/c.test]","Action":"build-output","Output":"# m/c [m/c.test]\n"}
{"ImportPath":"m/c [m/c.test]","Action":"build-output","Output":"c_test.go:3:2: undefined: x\n"}
{"ImportPath":"m/c [m/c.test]","Action":"build-fail"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/c"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/c","Output":"FAIL\tm/c [build failed]\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"fail","Package":"m/c","Elapsed":0,"FailedBuild":"m/c [m/c.test]"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/a"}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/b"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"run","Package":"m/a","Test":"TestPass"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"output","Package":"m/a","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"run","Package":"m/b","Test":"TestOK"}
{"Time":"2024-01-01T00:00:00.1Z","Action":"output","Package":"m/b","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Time":"2024-01-01T00:00:00.2Z","Action":"output","Package":"m/a","Test":"TestPass","Output":"    a_test.go:5: SECRET pass log\n"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"output","Package":"m/a","Test":"TestPass","Output":"--- PASS: TestPass (0.20s)\n"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"pass","Package":"m/a","Test":"TestPass","Elapsed":0.2}
{"Time":"2024-01-01T00:00:00.3Z","Action":"output","Package":"m/b","Test":"TestOK","Output":"--- PASS: TestOK (0.20s)\n"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"pass","Package":"m/b","Test":"TestOK","Elapsed":0.2}
{"Time":"2024-01-01T00:00:00.3Z","Action":"run","Package":"m/a","Test":"TestTable"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"output","Package":"m/a","Test":"TestTable","Output":"=== RUN   TestTable\n"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"output","Package":"m/a","Test":"TestTable","Output":"    a_test.go:9: table of 2\n"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"run","Package":"m/b","Test":"TestHang"}
{"Time":"2024-01-01T00:00:00.3Z","Action":"output","Package":"m/b","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Time":"2024-01-01T00:00:00.4Z","Action":"run","Package":"m/a","Test":"TestTable/good"}
{"Time":"2024-01-01T00:00:00.4Z","Action":"output","Package":"m/a","Test":"TestTable/good","Output":"=== RUN   TestTable/good\n"}
{"Time":"2024-01-01T00:00:00.4Z","Action":"output","Package":"m/a","Test":"TestTable/good","Output":"    a_test.go:12: SECRET good log\n"}
{"Time":"2024-01-01T00:00:00.4Z","Action":"output","Package":"m/a","Test":"TestTable/good","Output":"--- PASS: TestTable/good (0.00s)\n"}
{"Time":"2024-01-01T00:00:00.4Z","Action":"pass","Package":"m/a","Test":"TestTable/good","Elapsed":0}
{"Time":"2024-01-01T00:00:00.4Z","Action":"output","Package":"m/b","Test":"TestHang","Output":"    b_test.go:7: waiting\n"}
{"Time":"2024-01-01T00:00:00.5Z","Action":"run","Package":"m/a","Test":"TestTable/bad"}
{"Time":"2024-01-01T00:00:00.5Z","Action":"output","Package":"m/a","Test":"TestTable/bad","Output":"=== RUN   TestTable/bad\n"}
{"Time":"2024-01-01T00:00:00.5Z","Action":"output","Package":"m/a","Test":"TestTable/bad","Output":"    a_test.go:12: got 1\n"}
{"Time":"2024-01-01T00:00:00.5Z","Action":"output","Package":"m/a","Test":"TestTable/bad","Output":"    a_test.go:13: want 2\n"}
{"Time":"2024-01-01T00:00:00.6Z","Action":"output","Package":"m/a","Test":"TestTable/bad","Output":"--- FAIL: TestTable/bad (0.10s)\n"}
{"Time":"2024-01-01T00:00:00.6Z","Action":"fail","Package":"m/a","Test":"TestTable/bad","Elapsed":0.1}
make[1]: Entering directory '/src'
{"Time":"2024-01-01T00:00:00.6Z","Action":"output","Package":"m/a","Test":"TestTable","Output":"--- FAIL: TestTable (0.30s)\n"}
{"Time":"2024-01-01T00:00:00.6Z","Action":"fail","Package":"m/a","Test":"TestTable","Elapsed":0.3}
{"Time":"2024-01-01T00:00:00.7Z","Action":"output","Package":"m/a","Output":"FAIL\n"}
{"Time":"2024-01-01T00:00:00.7Z","Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.700s\n"}
{"Time":"2024-01-01T00:00:00.7Z","Action":"fail","Package":"m/a","Elapsed":0.7}
{"Time":"2024-01-01T00:00:01Z","Action":"output","Package":"m/b","Test":"TestHang","Output":"panic: oops\n"}
{"Time":"2024-01-01T00:00:01Z","Action":"output","Package":"m/b","Test":"TestHang","Output":"\n"}
{"Time":"2024-01-01T00:00:01Z","Action":"output","Package":"m/b","Test":"TestHang","Output":"goroutine 7 [running]:\n"}
{"Time":"2024-01-01T00:00:01Z","Action":"output","Package":"m/b","Output":"FAIL\tm/b\t1.000s\n"}
{"Time":"2024-01-01T00:00:01Z","Action":"fail","Package":"m/b","Elapsed":1}
`

// liveLog is what -stream shows of live as it comes.
const liveLog = `# m/c [m/c.test]
c_test.go:3:2: undefined: x
FAIL	m/c [build failed]
=== RUN   TestTable
    a_test.go:9: table of 2
=== RUN   TestTable/bad
    a_test.go:12: got 1
    a_test.go:13: want 2
--- FAIL: TestTable/bad (0.10s)
make[1]: Entering directory '/src'
--- FAIL: TestTable (0.30s)
FAIL
FAIL	m/a	0.700s
=== RUN   TestHang
    b_test.go:7: waiting
panic: oops

goroutine 7 [running]:
FAIL	m/b	1.000s

`

func runStream(t *testing.T, in string, n int) (out string, failed bool) {
	t.Helper()
	save := filepath.Join(t.TempDir(), "run.json")
	f, err := os.Create(save)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	failed, err = new(summary).stream(strings.NewReader(in), &b, f, n, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(save)
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != in {
		t.Errorf("saved file differs from the input:\n%s", saved)
	}
	return b.String(), failed
}

func TestStream(t *testing.T) {
	got, failed := runStream(t, live, 3)
	if !failed {
		t.Error("failed = false, want true")
	}
	if strings.Contains(got, "SECRET") {
		t.Error("output of a passed test was shown")
	}
	check(t, got, liveLog+`packages, slowest first (3)
  seconds  result        pass  fail  skip  package
    1.000  FAIL             1     0     0  m/b
    0.700  FAIL             2     2     0  m/a
    0.000  build failed     0     0     0  m/c
    1.700  total            3     2     0  (wall 1.000s)

slowest tests (3 of 6)
  seconds  result      kind     package  test
    0.700  unfinished  test     m/b      TestHang
    0.300  fail        test     m/a      TestTable
    0.200  pass        test     m/a      TestPass

unfinished tests (1)
  seconds  result      kind     package  test
    0.700  unfinished  test     m/b      TestHang

tests: 3 passed, 2 failed, 0 skipped
`)
}

// The failure status comes from failed tests, failed packages, failed builds
// and runs cut short; a clean run shows only the package lines.
func TestStreamStatus(t *testing.T) {
	ok := `{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/a"}
{"Time":"2024-01-01T00:00:00Z","Action":"run","Package":"m/a","Test":"TestA"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/a","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"pass","Package":"m/a","Test":"TestA","Elapsed":0}
{"Time":"2024-01-01T00:00:00Z","Action":"run","Package":"m/a","Test":"TestS"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/a","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"skip","Package":"m/a","Test":"TestS","Elapsed":0}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/a","Output":"PASS\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.010s\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"pass","Package":"m/a","Elapsed":0.01}
{"Time":"2024-01-01T00:00:00Z","Action":"start","Package":"m/e"}
{"Time":"2024-01-01T00:00:00Z","Action":"output","Package":"m/e","Output":"?   \tm/e\t[no test files]\n"}
{"Time":"2024-01-01T00:00:00Z","Action":"skip","Package":"m/e","Elapsed":0}
`
	got, failed := runStream(t, ok, 20)
	if failed {
		t.Error("clean run: failed = true")
	}
	if !strings.HasPrefix(got, "PASS\nok  \tm/a\t0.010s\n?   \tm/e\t[no test files]\n\npackages") {
		t.Errorf("clean run shows:\n%s", got)
	}
	if !strings.HasSuffix(got, "\n\ntests: 1 passed, 0 failed, 1 skipped\n") {
		t.Errorf("clean run ends:\n%s", got)
	}

	for name, in := range map[string]string{
		"build": `{"ImportPath":"m/w [m/w.test]","Action":"build-fail"}` + "\n",
		"package": `{"Action":"start","Package":"m/a"}
{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.1s\n"}
{"Action":"fail","Package":"m/a"}
`,
		"cut short": `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestA"}
{"Action":"output","Package":"m/a","Test":"TestA","Outp`,
	} {
		got, failed := runStream(t, in, 20)
		if !failed {
			t.Errorf("%s: failed = false", name)
		}
		if !strings.HasSuffix(got, "\n\ntests: 0 passed, 0 failed, 0 skipped\n") {
			t.Errorf("%s: output ends:\n%s", name, got)
		}
	}
}

type brokenWriter struct{ n int }

func (w *brokenWriter) Write(b []byte) (int, error) {
	if w.n++; w.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(b), nil
}

// A save that fails does not stop the stream; the error comes at the end.
func TestStreamSaveError(t *testing.T) {
	var b bytes.Buffer
	failed, err := new(summary).stream(strings.NewReader(live), &b, &brokenWriter{}, 3, false)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v, want disk full", err)
	}
	if !failed || !strings.HasPrefix(b.String(), liveLog) {
		t.Errorf("failed = %v, output:\n%s", failed, b.String())
	}
}

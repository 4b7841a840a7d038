package load

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseTrace(t *testing.T) {
	in := "# recorded 2024-05-01\ntime,rate\n\n0, 100\n30,300\n 45.5 ,0\r\n60,50\n"
	pts, err := ParseTrace(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []TracePoint{{0, 100}, {30 * time.Second, 300}, {45500 * time.Millisecond, 0}, {time.Minute, 50}}
	if len(pts) != len(want) {
		t.Fatalf("got %v, want %v", pts, want)
	}
	for i := range want {
		if pts[i] != want[i] {
			t.Fatalf("row %d: %v, want %v", i, pts[i], want[i])
		}
	}
	if err := (&Trace{Points: pts}).Check(); err != nil {
		t.Fatalf("parsed trace fails Check: %v", err)
	}
}

func TestParseTraceErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
		want string
	}{
		{"0,100\n10,-5\n", 2, "rate -5 is negative"},
		{"0,100\n10,200\n10,300\n", 3, "time 10 is not after the previous row's"},
		{"0,100\n10,200\n5,300\n", 3, "not after the previous row's"},
		{"time,rate\n-1,100\n", 2, "time -1 is negative"},
		{"0,100,7\n", 1, "expected two fields"},
		{"0;100\n", 1, "expected two fields"},
		{"0,100\nten,100\n", 2, `time "ten" is not a number`},
		{"0,lots\n", 1, `rate "lots" is not a number`},
		{"0,NaN\n", 1, "not a number"},
		{"0,inf\n", 1, "not a finite number"},
		{"1e9,1\n", 1, "beyond"},
		{"time,rate\nx,y\n", 2, "is not a number"}, // only the first row may be a header
		{"# nothing\n\n", 2, "no rows"},
		{"", 1, "no rows"},
		{strings.Repeat("9", 70000) + ",1\n", 1, "too long"},
	} {
		_, err := ParseTrace(strings.NewReader(c.in))
		var te *TraceError
		if !errors.As(err, &te) {
			t.Errorf("%q: error %v is not a TraceError", clip(c.in), err)
			continue
		}
		if te.Line != c.line || !strings.Contains(te.Msg, c.want) {
			t.Errorf("%q: line %d %q, want line %d containing %q", clip(c.in), te.Line, te.Msg, c.line, c.want)
		}
	}
}

// FuzzParseTrace: any input either fails with a line number or gives a
// trace that passes Check and whose schedule never goes backwards.
func FuzzParseTrace(f *testing.F) {
	for _, s := range []string{"0,100\n30,300\n", "time,rate\n0,0\n1.5,2\n", "# c\n0,1e6\n", "x,y\n", "0,-1\n", "1,1\n0,1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		pts, err := ParseTrace(strings.NewReader(in))
		if err != nil {
			var te *TraceError
			if errors.As(err, &te) && te.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		tr := &Trace{Points: pts, Spacing: Even}
		if err := tr.Check(); err != nil {
			t.Fatalf("parsed trace fails Check: %v", err)
		}
		last := int64(-1)
		for i := 0; i < 50; i++ {
			x := tr.Next()
			if x < last {
				t.Fatalf("schedule went back from %d to %d", last, x)
			}
			if x == math.MaxInt64 {
				break
			}
			last = x
		}
	})
}

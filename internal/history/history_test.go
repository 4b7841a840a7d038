package history

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() []Op {
	return []Op{
		{Process: 0, Kind: Write, Key: "k1", Value: 1, InvokeNS: 100, CompleteNS: 300, Outcome: OK, Level: "QUORUM"},
		{Process: 1, Kind: Read, Key: "k1", Value: 0, InvokeNS: 150, CompleteNS: 250, Outcome: OK, Replica: "db2", Level: "ONE"},
		{Process: 1, Kind: Read, Key: "k1", Value: NoValue, InvokeNS: 260, CompleteNS: 270, Outcome: OK},
		{Process: 2, Kind: Read, Key: `we"ird\key`, InvokeNS: 400, CompleteNS: 900, Outcome: Info},
		{Process: 0, Kind: Write, Key: "k1", Value: 2, InvokeNS: 310, CompleteNS: 320, Outcome: Fail},
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSONL(&b, sample()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 5 {
		t.Fatalf("%d lines, want 5:\n%s", n, b.String())
	}
	first := strings.SplitN(b.String(), "\n", 2)[0]
	want := `{"process":0,"f":"write","key":"k1","value":1,"invoke_ns":100,"complete_ns":300,"outcome":"ok","level":"QUORUM"}`
	if first != want {
		t.Errorf("first line\n%s\nwant\n%s", first, want)
	}
	got, err := ReadJSONL(strings.NewReader(b.String() + "\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sample()) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", got, sample())
	}
}

func TestJSONLRejectsBadLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"process":0,"f":"scan","key":"a","outcome":"ok"}`, `line 1: operation kind (f) "scan"`},
		{"\n" + `{"process":0,"f":"read","key":"a","outcome":"maybe"}`, `line 2: outcome "maybe"`},
		{`{"process":0,"f":"read","key":"","outcome":"ok"}`, "line 1: the read by process 0 has no key"},
		{`{"process":0,"f":"read","key":"a","outcome":"ok","invoke_ns":5,"complete_ns":4}`, "completes (4 ns) before it is invoked (5 ns)"},
		{`{"process":0,"f":"read","key":"a","outcome":"ok","colour":1}`, `line 1 is not an operation: json: unknown field "colour"`},
		{`not json`, "line 1 is not an operation"},
	} {
		_, err := ReadJSONL(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadJSONL(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

// The EDN export is one invoke and one completion per operation in time
// order; reads of populate's value and not-found reads are nil (Elle's
// initial state); keys are quoted as EDN strings.
func TestEDN(t *testing.T) {
	var b bytes.Buffer
	if err := WriteEDN(&b, sample()); err != nil {
		t.Fatal(err)
	}
	want := `{:index 0, :time 100, :type :invoke, :process 0, :f :txn, :value [[:w "k1" 1]]}
{:index 1, :time 150, :type :invoke, :process 1, :f :txn, :value [[:r "k1" nil]]}
{:index 2, :time 250, :type :ok, :process 1, :f :txn, :value [[:r "k1" nil]]}
{:index 3, :time 260, :type :invoke, :process 1, :f :txn, :value [[:r "k1" nil]]}
{:index 4, :time 270, :type :ok, :process 1, :f :txn, :value [[:r "k1" nil]]}
{:index 5, :time 300, :type :ok, :process 0, :f :txn, :value [[:w "k1" 1]]}
{:index 6, :time 310, :type :invoke, :process 0, :f :txn, :value [[:w "k1" 2]]}
{:index 7, :time 320, :type :fail, :process 0, :f :txn, :value [[:w "k1" 2]]}
{:index 8, :time 400, :type :invoke, :process 2, :f :txn, :value [[:r "we\"ird\\key" nil]]}
{:index 9, :time 900, :type :info, :process 2, :f :txn, :value [[:r "we\"ird\\key" nil]]}
`
	if b.String() != want {
		t.Errorf("EDN =\n%s\nwant\n%s", b.String(), want)
	}
}

func w(p int, key string, v, inv, done int64) Op {
	return Op{Process: p, Kind: Write, Key: key, Value: v, InvokeNS: inv, CompleteNS: done, Outcome: OK}
}

func r(p int, key string, v, inv, done int64) Op {
	return Op{Process: p, Kind: Read, Key: key, Value: v, InvokeNS: inv, CompleteNS: done, Outcome: OK}
}

func TestLinearizable(t *testing.T) {
	ops := []Op{
		// a: a read overlapping the write may see either version; then
		// every read sees 1.
		w(0, "a", 1, 100, 200), r(1, "a", 0, 150, 160), r(2, "a", 1, 170, 180), r(1, "a", 1, 210, 220),
		// b: a stale read after a read saw the new version (the planted
		// violation).
		w(0, "b", 1, 100, 200), r(1, "b", 1, 210, 220), r(2, "b", 0, 230, 240),
		// c: a write of unknown outcome may apply late: the read after it
		// sees 0 and a later one 5 - still linearizable. A failed write
		// never applied, so its version is not read (d is ok too).
		{Process: 0, Kind: Write, Key: "c", Value: 5, InvokeNS: 100, CompleteNS: 150, Outcome: Info},
		r(1, "c", 0, 200, 210), r(1, "c", 5, 300, 310),
		{Process: 0, Kind: Write, Key: "d", Value: 7, InvokeNS: 100, CompleteNS: 150, Outcome: Fail},
		r(1, "d", 0, 200, 210),
		// e: 3 operations, over the limit of 2.
		w(0, "e", 1, 1, 2), r(1, "e", 1, 3, 4), r(1, "e", 1, 5, 6),
	}
	got := CheckLinearizable(ops, LinOptions{MaxOps: 4, Timeout: 5 * time.Second})
	status := map[string]string{}
	for _, kc := range got {
		status[kc.Key] = kc.Status
	}
	want := map[string]string{"a": Linearizable, "b": Violation, "c": Linearizable, "d": Linearizable, "e": Linearizable}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("verdicts %v, want %v", status, want)
	}
	for _, kc := range got {
		if kc.Key == "b" && !strings.Contains(kc.Counterexample, "holds version 1, but process 2's read -> 0 (invoked 0.000000 s, completed 0.000000 s) cannot follow") {
			t.Errorf("counterexample of b: %q", kc.Counterexample)
		}
	}
	got = CheckLinearizable(ops, LinOptions{MaxOps: 2})
	for _, kc := range got {
		if kc.Key == "e" && (kc.Status != TooLarge || kc.Ops != 3) {
			t.Errorf("e with MaxOps 2: %+v, want skipped with 3 ops", kc)
		}
	}
}

// From an unknown initial value, the first read fixes it: a key never
// populated (not found, then written) is linearizable, and a read that
// goes back to the initial value after the write was seen is not.
func TestLinearizableUnknownInitial(t *testing.T) {
	ops := []Op{
		r(1, "n", NoValue, 10, 20), w(0, "n", 1, 30, 40), r(1, "n", 1, 50, 60),
		r(1, "m", NoValue, 10, 20), w(0, "m", 1, 30, 40), r(1, "m", 1, 50, 60), r(2, "m", NoValue, 70, 80),
	}
	got := CheckLinearizable(ops, LinOptions{UnknownInitial: true})
	if got[0].Key != "m" || got[0].Status != Violation || got[1].Status != Linearizable {
		t.Errorf("verdicts %+v; want m violation, n ok", got)
	}
	if got := CheckLinearizable(ops[:3], LinOptions{}); got[0].Status != Violation {
		t.Errorf("from version 0, a not-found read is a violation; got %+v", got)
	}
}

// A spent budget leaves the remaining keys unchecked, as timed out.
func TestLinearizableBudget(t *testing.T) {
	ops := []Op{w(0, "a", 1, 1, 2), w(0, "b", 1, 1, 2)}
	got := CheckLinearizable(ops, LinOptions{Budget: time.Nanosecond})
	for _, kc := range got {
		if kc.Status != TimedOut || kc.Ops != 1 {
			t.Errorf("%+v, want timeout with 1 op", kc)
		}
	}
}

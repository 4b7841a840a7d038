package history

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteEDN writes ops as a Jepsen history in EDN, one map per line, for
// Elle's rw-register checker (elle.rw-register; elle-cli --model
// rw-register): every operation becomes a single-micro-op transaction,
// an :invoke then its completion (:ok, :fail or :info), ordered by time
// and numbered by :index:
//
//	{:index 0, :time 1200345, :type :invoke, :process 3, :f :txn, :value [[:r "user17" nil]]}
//	{:index 1, :time 1201007, :type :ok, :process 3, :f :txn, :value [[:r "user17" 41]]}
//
// A write's micro-op is [:w key version]. Reads of version 0 (populate's
// value) and not-found reads are written as nil, Elle's initial state, so
// every non-nil value is one unique write, as rw-register requires. An
// :info completion is placed where the client gave up, as Jepsen does.
func WriteEDN(w io.Writer, ops []Op) error {
	type event struct {
		t        int64
		complete bool
		op       int
	}
	evs := make([]event, 0, 2*len(ops))
	for i, o := range ops {
		evs = append(evs, event{o.InvokeNS, false, i}, event{o.CompleteNS, true, i})
	}
	// Invocations before completions at the same instant, so no operation
	// completes before it starts; otherwise the recorded order.
	sort.SliceStable(evs, func(i, j int) bool {
		if evs[i].t != evs[j].t {
			return evs[i].t < evs[j].t
		}
		return !evs[i].complete && evs[j].complete
	})
	bw := bufio.NewWriter(w)
	for idx, e := range evs {
		o := ops[e.op]
		typ := "invoke"
		if e.complete {
			typ = o.Outcome
		}
		f := "r"
		val := "nil"
		switch {
		case o.Kind == Write:
			f = "w"
			val = strconv.FormatInt(o.Value, 10)
		case e.complete && o.Outcome == OK && o.Value > 0:
			val = strconv.FormatInt(o.Value, 10)
		}
		fmt.Fprintf(bw, "{:index %d, :time %d, :type :%s, :process %d, :f :txn, :value [[:%s %s %s]]}\n",
			idx, e.t, typ, o.Process, f, ednString(o.Key), val)
	}
	return bw.Flush()
}

// ednString quotes s as an EDN string: backslash, quote and the control
// characters EDN names are escaped, everything else is written as is
// (EDN strings are UTF-8).
func ednString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

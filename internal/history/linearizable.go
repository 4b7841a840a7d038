package history

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Linearizability of single-key registers, checked with porcupine
// (Knossos's algorithm, Horn and Kroening's P-compositionality: a history
// is linearizable if and only if every key's is, so each key is checked
// on its own). Checking is NP-hard in general, so a key with more than
// LinOptions.MaxOps operations is skipped and each key's check has a
// time limit.

// Linearizability verdicts of one key.
const (
	Linearizable = "ok"        // a linearization exists
	Violation    = "violation" // none exists: Counterexample says where it breaks
	TooLarge     = "skipped"   // more operations than MaxOps
	TimedOut     = "timeout"   // no verdict within Timeout
)

// LinOptions bounds the check.
type LinOptions struct {
	// MaxOps is the most operations a key may have to be checked (10,000
	// when 0).
	MaxOps int
	// Timeout is each key's time limit (10 s when 0).
	Timeout time.Duration
	// Budget, when set, bounds the whole check: once it is spent, the
	// keys not yet checked are TimedOut without a check (a report should
	// not wait minutes on a history of many keys).
	Budget time.Duration
	// UnknownInitial checks each register from an unknown initial value
	// (the first read fixes it) instead of version 0, populate's value.
	UnknownInitial bool
}

// KeyCheck is one key's verdict.
type KeyCheck struct {
	Key string `json:"key"`
	// Ops counts the operations checked: ok reads, ok writes and writes of
	// unknown outcome (which may take effect at any time after their
	// invocation, or never); failed operations and reads of unknown
	// outcome observe nothing and are left out.
	Ops    int    `json:"ops"`
	Status string `json:"status"`
	// Counterexample, for a violation, names the operation that no
	// linearization of the longest linearizable prefix can take next.
	Counterexample string `json:"counterexample,omitempty"`
}

// unknownValue is the register's state before its first read when the
// initial value is unknown.
const unknownValue = math.MinInt64

type regInput struct {
	write bool
	value int64 // the version written
}

// registerModel is a read/write register holding a version.
func registerModel() porcupine.Model {
	return porcupine.Model{
		Step: func(state, input, output any) (bool, any) {
			st, in := state.(int64), input.(regInput)
			if in.write {
				return true, in.value
			}
			got := output.(int64)
			if st == unknownValue {
				return true, got
			}
			return got == st, st
		},
		Hash: func(state any) uint64 { return uint64(state.(int64)) },
		DescribeOperation: func(input, output any) string {
			if in := input.(regInput); in.write {
				return fmt.Sprintf("write %d", in.value)
			}
			return fmt.Sprintf("read -> %d", output.(int64))
		},
	}
}

// CheckLinearizable checks every key's register history, and returns the
// verdicts sorted by key.
func CheckLinearizable(ops []Op, opt LinOptions) []KeyCheck {
	if opt.MaxOps <= 0 {
		opt.MaxOps = 10000
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Second
	}
	byKey := map[string][]int{}
	for i, o := range ops {
		if checked(o) {
			byKey[o.Key] = append(byKey[o.Key], i)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]KeyCheck, 0, len(keys))
	start := time.Now()
	for _, k := range keys {
		if opt.Budget > 0 && time.Since(start) >= opt.Budget {
			out = append(out, KeyCheck{Key: k, Ops: len(byKey[k]), Status: TimedOut})
			continue
		}
		out = append(out, checkKey(ops, k, byKey[k], opt))
	}
	return out
}

// checked reports whether o takes part in the check.
func checked(o Op) bool {
	if o.Kind == Write {
		return o.Outcome == OK || o.Outcome == Info
	}
	return o.Outcome == OK
}

func checkKey(ops []Op, key string, idx []int, opt LinOptions) KeyCheck {
	kc := KeyCheck{Key: key, Ops: len(idx)}
	if len(idx) > opt.MaxOps {
		kc.Status = TooLarge
		return kc
	}
	init := int64(0)
	if opt.UnknownInitial {
		init = unknownValue
	}
	model := registerModel()
	model.Init = func() any { return init }
	pops := make([]porcupine.Operation, len(idx))
	for j, i := range idx {
		o := ops[i]
		ret := o.CompleteNS
		if o.Outcome == Info {
			ret = math.MaxInt64 // may take effect at any time after its invocation
		}
		pops[j] = porcupine.Operation{ClientId: o.Process, Input: regInput{write: o.Kind == Write, value: o.Value},
			Call: o.InvokeNS, Output: o.Value, Return: ret, Metadata: i}
	}
	res, info := porcupine.CheckOperationsVerbose(model, pops, opt.Timeout)
	switch res {
	case porcupine.Ok:
		kc.Status = Linearizable
	case porcupine.Unknown:
		kc.Status = TimedOut
	default:
		kc.Status = Violation
		kc.Counterexample = counterexample(ops, pops, info, init)
	}
	return kc
}

// counterexample describes where the key's history stops being
// linearizable: the longest linearizable prefix porcupine found, the value
// the register holds after it, and the earliest-returning operation left
// out of it (the one that cannot follow).
func counterexample(ops []Op, pops []porcupine.Operation, info porcupine.LinearizationInfo, init int64) string {
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, seq := range part {
			if len(seq) > len(longest) {
				longest = seq
			}
		}
	}
	in := map[int]bool{}
	state := init
	for _, p := range longest {
		in[p.Metadata.(int)] = true
		if r := p.Input.(regInput); r.write {
			state = r.value
		} else if state == unknownValue {
			state = p.Output.(int64)
		}
	}
	var next *porcupine.Operation
	for j := range pops {
		if !in[pops[j].Metadata.(int)] && (next == nil || pops[j].Return < next.Return) {
			next = &pops[j]
		}
	}
	if next == nil {
		return fmt.Sprintf("no linearization of all %d operations", len(pops))
	}
	o := ops[next.Metadata.(int)]
	holds := "an unknown value"
	if state != unknownValue {
		holds = fmt.Sprintf("version %d", state)
	}
	return fmt.Sprintf("after a linearizable prefix of %d of %d operations the register holds %s, but process %d's %s (invoked %s, completed %s) cannot follow",
		len(longest), len(pops), holds, o.Process, describe(o), runTime(o.InvokeNS), runTime(o.CompleteNS))
}

// describe names an operation: "read -> 3", "write 4".
func describe(o Op) string {
	if o.Kind == Write {
		return fmt.Sprintf("write %d", o.Value)
	}
	if o.Value == NoValue {
		return "read -> not found"
	}
	return fmt.Sprintf("read -> %d", o.Value)
}

// runTime prints ns since the run's start as "12.345678 s".
func runTime(ns int64) string {
	return fmt.Sprintf("%.6f s", float64(ns)/1e9)
}

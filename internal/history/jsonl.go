package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// The JSON-lines format: one operation per line, a JSON object with the
// fields of Op by their tags, in the order the run recorded them:
//
//	{"process":3,"f":"read","key":"user17","value":41,"invoke_ns":1200345,"complete_ns":1201007,"outcome":"ok","replica":"db2","level":"ONE"}
//
// "f" is "read" or "write"; "value" is the version written or read (0 =
// the value populate wrote, -1 = not found); the times are nanoseconds
// since the run's start on the load generator's clock; "outcome" is "ok",
// "fail" or "info"; "replica" and "level" are left out when empty. Blank
// lines are skipped. docs/consistency.md ("History format") documents it.

// WriteJSONL writes ops to w in the JSON-lines format, one per line.
func WriteJSONL(w io.Writer, ops []Op) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, o := range ops {
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadJSONL reads a JSON-lines history. A line that is not an operation
// (unknown field, wrong kind or outcome, completion before invocation) is
// an error naming the line.
func ReadJSONL(r io.Reader) ([]Op, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ops []Op
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var o Op
		if err := dec.Decode(&o); err != nil {
			return nil, fmt.Errorf("history line %d is not an operation: %v", n, err)
		}
		if err := o.Validate(); err != nil {
			return nil, fmt.Errorf("history line %d: %v", n, err)
		}
		ops = append(ops, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the history: %v", err)
	}
	return ops, nil
}

// Validate checks that o is an operation the analyses can read: a known
// kind and outcome, a key, and a completion no earlier than the
// invocation.
func (o Op) Validate() error {
	switch {
	case o.Kind != Read && o.Kind != Write:
		return fmt.Errorf(`operation kind (f) %q must be "read" or "write"`, o.Kind)
	case o.Outcome != OK && o.Outcome != Fail && o.Outcome != Info:
		return fmt.Errorf(`outcome %q must be "ok", "fail" or "info"`, o.Outcome)
	case o.Key == "":
		return fmt.Errorf("the %s by process %d has no key", o.Kind, o.Process)
	case o.CompleteNS < o.InvokeNS:
		return fmt.Errorf("the %s of %q by process %d completes (%d ns) before it is invoked (%d ns)", o.Kind, o.Key, o.Process, o.CompleteNS, o.InvokeNS)
	}
	return nil
}

// Formats are the formats Export writes: "jsonl" (this package's JSON
// lines) and "edn" (Jepsen EDN for Elle).
var Formats = []string{"jsonl", "edn"}

// Export writes ops to w in format, one of Formats.
func Export(w io.Writer, ops []Op, format string) error {
	switch format {
	case "jsonl":
		return WriteJSONL(w, ops)
	case "edn":
		return WriteEDN(w, ops)
	}
	return fmt.Errorf("cannot write a history as %q; choose jsonl or edn", format)
}

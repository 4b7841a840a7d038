// Package history is the operation history of a consistency run: one
// record per operation a client session invoked, with when it was invoked,
// when it completed, what it wrote or read and how it ended. The staleness
// and session-guarantee analyses read it, the linearizability check runs
// on it, and it is exported as JSON lines (this package's format) and as
// Jepsen EDN for Elle (seed-digest §5, consistency).
//
// Values are versions: a writer writes version 1, 2, 3... of a key, so a
// read names the version it saw and staleness is a comparison of
// integers. Version 0 is the value populate wrote; NoValue is a read that
// found nothing.
package history

// Op kinds.
const (
	Read  = "read"
	Write = "write"
)

// Outcomes, as Jepsen names them: ok = it happened, fail = it certainly
// did not, info = unknown (a timeout: a write may or may not have been
// applied).
const (
	OK   = "ok"
	Fail = "fail"
	Info = "info"
)

// NoValue is the version of a read that found no record.
const NoValue int64 = -1

// Op is one operation of one client session.
type Op struct {
	// Process is the client session that ran it; a session runs one
	// operation at a time, in order.
	Process int `json:"process"`
	// Kind is Read or Write.
	Kind string `json:"f"`
	// Key is the record's key.
	Key string `json:"key"`
	// Value is the version written, or the version the read returned
	// (NoValue: not found; meaningless unless Outcome is OK).
	Value int64 `json:"value"`
	// InvokeNS and CompleteNS are nanoseconds since the run's start on the
	// load generator's clock (already corrected for the offset of the host
	// that timed them, when another host did).
	InvokeNS   int64 `json:"invoke_ns"`
	CompleteNS int64 `json:"complete_ns"`
	// Outcome is OK, Fail or Info.
	Outcome string `json:"outcome"`
	// Replica names where a read was served (a node, "primary",
	// "replica1") when the target knows; "" otherwise.
	Replica string `json:"replica,omitempty"`
	// Level is the consistency level or read routing the operation used
	// ("ONE", "QUORUM", "primary", "replica"); "" when the target has one.
	Level string `json:"level,omitempty"`
}

// Complete reports whether the operation finished with a known outcome.
func (o Op) Complete() bool { return o.Outcome == OK || o.Outcome == Fail }

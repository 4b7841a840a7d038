// Package workload defines what a load engine runs: operation mixes, key
// choice distributions and record contents (the YCSB core workloads and custom
// mixes). It knows nothing about how or how fast operations are issued; that is
// the load engine's job (internal/load), and nothing about how they execute;
// that is a target's job (internal/target).
package workload

// OpType names an operation kind. The engine keeps per-type statistics indexed
// by OpType, so the values are small and dense.
type OpType uint8

// The YCSB core operation types (seed-digest §1).
const (
	Read OpType = iota
	Update
	Insert
	Scan
	ReadModifyWrite
	NumOpTypes // number of operation types; not an operation
)

var opNames = [NumOpTypes]string{"read", "update", "insert", "scan", "read_modify_write"}

// String returns the spec/report name of the operation type, e.g. "read_modify_write".
func (t OpType) String() string {
	if t < NumOpTypes {
		return opNames[t]
	}
	return "unknown"
}

// ParseOpType maps a spec name ("read", "update", "insert", "scan",
// "read_modify_write") to its OpType.
func ParseOpType(name string) (OpType, bool) {
	for i, n := range opNames {
		if n == name {
			return OpType(i), true
		}
	}
	return 0, false
}

// OpTypeNames lists every operation type name in OpType order.
func OpTypeNames() []string { return append([]string(nil), opNames[:]...) }

// Op is one operation to execute. A worker owns one Op and reuses it for every
// request, so that nothing is allocated per request: Key and Values point into
// buffers owned by the Op.
type Op struct {
	Type   OpType
	KeyNum uint64 // logical record number chosen by the key distribution
	Key    []byte // record key as stored by targets, e.g. "user6284781860667377211"
	// Field is the single field an Update or ReadModifyWrite writes and a Read
	// reads when the workload does not read/write all fields; -1 = all fields.
	Field int
	// Values holds the field values to write (Insert: all fields; Update and
	// ReadModifyWrite: all fields, or only Values[Field] when Field >= 0).
	Values [][]byte
	// ScanLength is the number of records a Scan returns, starting at Key.
	ScanLength int
	// Params are the drawn parameters of a statement operation (Type >=
	// NumOpTypes, see StatementOf), one per ? placeholder.
	Params   []Param
	paramBuf [][]byte // text buffers behind Params[i].Str
}

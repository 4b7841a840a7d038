package apptier

import (
	"bytes"
	"errors"
)

// The HTTP interface of an application server. Keys and field numbers go
// in the query; field values in the body, separated by tabs (YCSB values
// are printable and hold no tab or newline; a value that does is refused).
//
//	GET  /healthz                          200 when the database answers
//	GET  /read?key=K[&field=F]             200, the record's values; 404
//	GET  /scan?key=K&n=N[&field=F]         200, one line of values per record
//	POST /update?key=K[&field=F]           body: all values, or field F's; 404
//	POST /insert?key=K                     body: all values
//	POST /rmw?key=K[&field=F]              read, then update; 404
//	POST /admin/prepare?fields=N[&ddl=1][&fresh=1]
//	                                       (re)create the table when ddl=1
//	                                       (dropping it first when fresh=1),
//	                                       then prepare the statements
//	POST /admin/load                       body: one record per line, KEY TAB VALUES
//	POST /admin/replicas                   body: one HOST:PORT per line, the
//	                                       database's read replicas now (none:
//	                                       reads go to the primary again)
//	GET  /admin/replicas                   the reads each served: one line
//	                                       each, HOST:PORT TAB N, then
//	                                       primary TAB N and retried TAB N
//
// Reads and scans go round-robin to the replicas the last POST
// /admin/replicas listed (the primary while it listed none); updates,
// inserts and read-modify-writes always go to the primary, whose URL comes
// from the environment (see Config.DSN). A replica is reached with the
// primary's user, password and database. A read that fails because its
// replica went away is retried once on the primary. /admin/prepare empties
// the replica list: the table may have changed, so the target sends it
// again once the replicas have replayed the new table.
//
// Every data request first spends the server's CPU work (Config.Work).
// Errors carry the kind of failure in the KindHeader header (timeout,
// busy, connection, deadlock, constraint), so that the client can count
// them by kind; 404 is a missing record.
const (
	PathHealth   = "/healthz"
	PathRead     = "/read"
	PathScan     = "/scan"
	PathUpdate   = "/update"
	PathInsert   = "/insert"
	PathRMW      = "/rmw"
	PathPrepare  = "/admin/prepare"
	PathLoad     = "/admin/load"
	PathReplicas = "/admin/replicas"

	// KindHeader names the kind of a failed request.
	KindHeader = "X-Headroom-Kind"
)

// ErrBadValue is returned for a value holding a tab or a newline, which
// the protocol cannot carry.
var ErrBadValue = errors.New("a field value holds a tab or newline, which the application tier's protocol cannot carry")

// AppendValues appends values separated by tabs.
func AppendValues(dst []byte, values [][]byte) ([]byte, error) {
	for i, v := range values {
		if bytes.IndexByte(v, '\t') >= 0 || bytes.IndexByte(v, '\n') >= 0 {
			return dst, ErrBadValue
		}
		if i > 0 {
			dst = append(dst, '\t')
		}
		dst = append(dst, v...)
	}
	return dst, nil
}

// splitValues splits a tab-separated line into its values.
func splitValues(line []byte) [][]byte {
	return bytes.Split(line, []byte{'\t'})
}

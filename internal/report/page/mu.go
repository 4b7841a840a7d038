package page

import "github.com/headroom-dev/headroom/internal/analysis/stats"

// MuLabel names mu, seed 001's network delay, as Headroom measures it:
// the client's mean response time minus the server's mean execution time
// (seed-digest §2). Every server-time source Headroom reads counts
// execution only: pg_stat_statements' execution time, performance_schema's
// statement timer (from parse to the last result packet), Redis INFO
// commandstats' time inside the command. None counts the time a request
// waited before the server started on it, so mu holds the network, the
// client's queueing and the server's queueing, not the network alone.
const MuLabel = "network + queueing"

// MuNote says what mu holds, for a table's source line.
const MuNote = "network + queueing = the client's mean minus the server's mean execution time: the network plus queueing on both sides " +
	"(in the client, and in the server before it starts executing), because the servers' timers (pg_stat_statements, performance_schema, " +
	"Redis commandstats) count execution only; a negative difference (the server's time above the client's, as at low load) is within measurement error"

// MuWithinError is how a negative mu prints: the server's time above the
// client's is not a negative duration but the error of two clocks and two
// averages (seen: -106 µs at low load).
const MuWithinError = "within measurement error"

// MuCell prints mu with its standard error, or MuWithinError for a
// negative mean; the cell keeps the numbers either way.
func MuCell(e stats.Estimate) Cell {
	if e.N > 0 && e.Mean < 0 {
		return Estimate(MuWithinError, e.Mean, e.SE)
	}
	return latCell(e)
}

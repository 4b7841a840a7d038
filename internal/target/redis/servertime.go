package redistarget

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/workload"
)

// Server-side time comes from INFO commandstats, which counts calls and
// microseconds of execution per Redis command (not per YCSB operation).
// Each operation issues a known set of commands:
//
//	mode hash:   read   HGETALL or HMGET          update HSET
//	             insert HSET + ZADD               scan   ZRANGEBYSCORE + HGETALL/HMGET per record
//	             read_modify_write HGETALL/HMGET + HSET
//	mode string: read   GET                       update SET or SETRANGE
//	             insert SET                       read_modify_write GET + SET/SETRANGE
//
// An operation is reported only when no other operation of the workload's
// mix issues any of its commands, so that its time is its own: workload A
// (read, update) reports both, workload F (read, read_modify_write)
// neither. Total is the time of all the operation's commands; Calls counts
// one command that runs once per operation (ZADD for an insert,
// ZRANGEBYSCORE for a scan, the read for a read-modify-write).

// opCommands says which commands make up one operation.
type opCommands struct {
	op    string
	cmds  []string // every command the operation issues
	calls []string // the commands counted once per operation
}

func commandsOf(mode string) map[workload.OpType]opCommands {
	if mode == modeString {
		return map[workload.OpType]opCommands{
			workload.Read:            {cmds: []string{"get"}, calls: []string{"get"}},
			workload.Update:          {cmds: []string{"set", "setrange"}, calls: []string{"set", "setrange"}},
			workload.Insert:          {cmds: []string{"set"}, calls: []string{"set"}},
			workload.ReadModifyWrite: {cmds: []string{"get", "set", "setrange"}, calls: []string{"get"}},
		}
	}
	return map[workload.OpType]opCommands{
		workload.Read:            {cmds: []string{"hgetall", "hmget"}, calls: []string{"hgetall", "hmget"}},
		workload.Update:          {cmds: []string{"hset"}, calls: []string{"hset"}},
		workload.Insert:          {cmds: []string{"hset", "zadd"}, calls: []string{"zadd"}},
		workload.Scan:            {cmds: []string{"zrangebyscore", "hgetall", "hmget"}, calls: []string{"zrangebyscore"}},
		workload.ReadModifyWrite: {cmds: []string{"hgetall", "hmget", "hset"}, calls: []string{"hgetall", "hmget"}},
	}
}

// timingFor picks the operations of mix whose commands no other operation
// of mix shares.
func timingFor(mode string, mix [workload.NumOpTypes]float64) []opCommands {
	all := commandsOf(mode)
	var out []opCommands
	for t, w := range mix {
		oc, ok := all[workload.OpType(t)]
		if !ok || !(w > 0) {
			continue
		}
		shared := false
		for u, wu := range mix {
			if u == t || !(wu > 0) {
				continue
			}
			for _, c := range all[workload.OpType(u)].cmds {
				shared = shared || slices.Contains(oc.cmds, c)
			}
		}
		if !shared {
			oc.op = workload.OpType(t).String()
			out = append(out, oc)
		}
	}
	return out
}

// cmdStat is one line of INFO commandstats.
type cmdStat struct {
	calls int64
	usec  int64
}

// parseCommandStats reads lines like
// "cmdstat_hgetall:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=0".
func parseCommandStats(info string) map[string]cmdStat {
	out := map[string]cmdStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var s cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "calls":
				s.calls = n
			case "usec":
				s.usec = n
			}
		}
		out[strings.ToLower(strings.TrimPrefix(name, "cmdstat_"))] = s
	}
	return out
}

// serverTimes sums the commands of each reported operation.
func serverTimes(timing []opCommands, stats map[string]cmdStat) []target.ServerTime {
	out := make([]target.ServerTime, 0, len(timing))
	for _, oc := range timing {
		st := target.ServerTime{Op: oc.op}
		for _, c := range oc.cmds {
			st.Total += time.Duration(stats[c].usec) * time.Microsecond
		}
		for _, c := range oc.calls {
			st.Calls += stats[c].calls
		}
		if st.Calls > 0 {
			out = append(out, st)
		}
	}
	return out
}

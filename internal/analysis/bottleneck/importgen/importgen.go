// Package importgen writes monitoring data whose bottlenecks are known by
// construction, in the formats headroom import reads: sysstat's sadf -d
// CSV, iostat -x -t -o JSON, and node_exporter text scrapes. A Scenario
// decides, for every resource and every 1 s interval, whether the resource
// is critically saturated; the files carry utilisations far on either side
// of the 95% threshold; and Expected derives each resource's class from
// that design with its own plain reading of seed 003's rules
// (seed-digest §6), not with the analysis under test.
package importgen

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"time"
)

// Classes a Window can be designed to show (003 §6.2).
const (
	Single       = "single"
	Oscillatory  = "oscillatory"
	Concurrent   = "concurrent"
	Simultaneous = "simultaneous"
	None         = "none"
)

// Design thresholds, as the analysis's defaults (seed-digest §6): alpha,
// the fully and partially saturated frequencies, epsilon.
const (
	alpha   = 95.0
	full    = 0.95
	partial = 0.01
	epsilon = 0.05
)

// Resource names as the importers write them: "host/cpu", "host/disk:vda".
const (
	CPU  = "cpu"
	Disk = "disk:vda"
)

// Window is one stretch of the scenario designed to show a class.
type Window struct {
	Class string
	// Saturated says, per resource ("db1/cpu") and interval, whether the
	// resource is above alpha; resources not named never are.
	Saturated map[string][]bool
}

// Scenario is the monitoring data of some hosts over consecutive windows
// of Seconds 1 s intervals each, from Start.
type Scenario struct {
	Start   time.Time
	Seconds int
	Hosts   []string
	Windows []Window
	util    map[string][]float64 // resource -> utilisation per second
}

// pattern is a saturation pattern: saturated in the intervals k where
// f(k) holds.
func pattern(n int, f func(k int) bool) []bool {
	out := make([]bool, n)
	for k := range out {
		out[k] = f(k)
	}
	return out
}

// FiveClasses is three hosts (db1..db3, each with a cpu and disk:vda) over
// five windows of n seconds, one per class, in the order single,
// oscillatory, concurrent, simultaneous, none:
//
//   - single: db1/cpu saturated every other second;
//   - oscillatory: db1/cpu and db2/disk:vda saturated in turn (every third
//     second each, never together);
//   - concurrent: db1/disk:vda every other second and db3/cpu two seconds in
//     four, together in a quarter of the seconds (more than epsilon);
//   - simultaneous: db2/cpu and db3/disk:vda saturated throughout;
//   - none: nothing above alpha.
//
// n must be a multiple of 12, so that every pattern fits whole periods.
func FiveClasses(start time.Time, n int, seed int64) *Scenario {
	s := &Scenario{Start: start, Seconds: n, Hosts: []string{"db1", "db2", "db3"}}
	s.Windows = []Window{
		{Class: Single, Saturated: map[string][]bool{
			"db1/" + CPU: pattern(n, func(k int) bool { return k%2 == 0 })}},
		{Class: Oscillatory, Saturated: map[string][]bool{
			"db1/" + CPU:  pattern(n, func(k int) bool { return k%3 == 0 }),
			"db2/" + Disk: pattern(n, func(k int) bool { return k%3 == 1 })}},
		{Class: Concurrent, Saturated: map[string][]bool{
			"db1/" + Disk: pattern(n, func(k int) bool { return k%2 == 0 }),
			"db3/" + CPU:  pattern(n, func(k int) bool { return k%4 < 2 })}},
		{Class: Simultaneous, Saturated: map[string][]bool{
			"db2/" + CPU:  pattern(n, func(int) bool { return true }),
			"db3/" + Disk: pattern(n, func(int) bool { return true })}},
		{Class: None, Saturated: map[string][]bool{}},
	}
	s.fill(seed)
	return s
}

// Resources are every host's cpu and disk:vda, sorted.
func (s *Scenario) Resources() []string {
	var out []string
	for _, h := range s.Hosts {
		out = append(out, h+"/"+CPU, h+"/"+Disk)
	}
	sort.Strings(out)
	return out
}

// fill draws the utilisations: a saturated second lies in [97, 99.9], any
// other in [5, 88], two decimals (as sysstat prints them), so that no
// rounding or resampling can move a second across alpha.
func (s *Scenario) fill(seed int64) {
	rng := rand.New(rand.NewSource(seed))
	s.util = map[string][]float64{}
	for _, id := range s.Resources() {
		for _, w := range s.Windows {
			sat := w.Saturated[id]
			for k := 0; k < s.Seconds; k++ {
				var u float64
				if sat != nil && sat[k] {
					u = 97 + 2.9*rng.Float64()
				} else {
					u = 5 + 83*rng.Float64()
				}
				s.util[id] = append(s.util[id], float64(int(u*100+0.5))/100)
			}
		}
	}
}

// Util is the utilisation of a resource in second k of the scenario.
func (s *Scenario) Util(id string, k int) float64 { return s.util[id][k] }

// Total is the number of seconds of the scenario.
func (s *Scenario) Total() int { return s.Seconds * len(s.Windows) }

// WindowStart is when window i starts.
func (s *Scenario) WindowStart(i int) time.Time {
	return s.Start.Add(time.Duration(i*s.Seconds) * time.Second)
}

// Expected is each resource's class in window i, "none" for a resource
// that is not a bottleneck, derived from the saturation design alone:
//
//   - f_R is the share of saturated seconds; f_R >= full is fully,
//     partial < f_R < full partially saturated; the others are not
//     bottleneck resources;
//   - two bottleneck resources are dependent when they are saturated
//     together in at most epsilon of the seconds;
//   - one bottleneck resource alone is single; a partially saturated one
//     with a dependent partially saturated partner is oscillatory; with no
//     dependent partner a fully saturated one is simultaneous and a
//     partially saturated one concurrent; any other is "other".
//
// (The scenarios' dependent sets are pairs, so the maximal sets of
// mutually dependent resources that 003 calls oscillatory are the pairs
// themselves.)
func (s *Scenario) Expected(i int) map[string]string {
	w := s.Windows[i]
	f := map[string]float64{}
	var bn []string
	for _, id := range s.Resources() {
		n := 0
		for _, b := range w.Saturated[id] {
			if b {
				n++
			}
		}
		f[id] = float64(n) / float64(s.Seconds)
		if f[id] > partial {
			bn = append(bn, id)
		}
	}
	out := map[string]string{}
	for _, id := range s.Resources() {
		out[id] = None
	}
	if len(bn) == 1 {
		out[bn[0]] = Single
		return out
	}
	dependent := func(a, b string) bool {
		both := 0
		for k := 0; k < s.Seconds; k++ {
			if w.Saturated[a][k] && w.Saturated[b][k] {
				both++
			}
		}
		return float64(both)/float64(s.Seconds) <= epsilon
	}
	for _, id := range bn {
		partialSat := f[id] < full
		depPartial, depAny := false, false
		for _, o := range bn {
			if o != id && dependent(id, o) {
				depAny = true
				depPartial = depPartial || f[o] < full
			}
		}
		switch {
		case partialSat && depPartial:
			out[id] = Oscillatory
		case depAny:
			out[id] = "other"
		case partialSat:
			out[id] = Concurrent
		default:
			out[id] = Simultaneous
		}
	}
	return out
}

// Sar is host's data as `sadf -d` prints it for `sar -u -d 1`: a CPU
// report and a disk report, each line stamped with the end of its
// interval in UTC.
func (s *Scenario) Sar(host string) []byte {
	var b strings.Builder
	stamp := func(k int) string {
		return s.Start.Add(time.Duration(k+1)*time.Second).UTC().Format(time.DateTime) + " UTC"
	}
	b.WriteString("# hostname;interval;timestamp;CPU;%user;%nice;%system;%iowait;%steal;%idle\n")
	for k := 0; k < s.Total(); k++ {
		u := s.Util(host+"/"+CPU, k)
		user := float64(int(u*80+0.5)) / 100
		fmt.Fprintf(&b, "%s;1;%s;-1;%.2f;0.00;%.2f;0.00;0.00;%.2f\n", host, stamp(k), user, u-user, 100-u)
	}
	b.WriteString("# hostname;interval;timestamp;DEV;tps;rkB/s;wkB/s;dkB/s;areq-sz;aqu-sz;await;%util\n")
	for k := 0; k < s.Total(); k++ {
		u := s.Util(host+"/"+Disk, k)
		fmt.Fprintf(&b, "%s;1;%s;vda;%.2f;%.2f;%.2f;0.00;8.00;%.2f;0.50;%.2f\n", host, stamp(k), 20*u, 40*u, 120*u, u/50, u)
	}
	return []byte(b.String())
}

// Iostat is host's data as `S_TIME_FORMAT=ISO iostat -x -t -o JSON 1`
// prints it: a first report (since boot, which the importer drops), then
// one report per second stamped with its end.
func (s *Scenario) Iostat(host string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "{\"sysstat\": {\n\t\"hosts\": [\n\t\t{\n\t\t\t\"nodename\": %q,\n\t\t\t\"sysname\": \"Linux\",\n\t\t\t\"number-of-cpus\": 1,\n\t\t\t\"date\": %q,\n\t\t\t\"statistics\": [\n",
		host, s.Start.UTC().Format(time.DateOnly))
	report := func(end time.Time, cpu, disk float64, last bool) {
		user := float64(int(cpu*80+0.5)) / 100
		fmt.Fprintf(&b, "\t\t\t\t{\n\t\t\t\t\t\"timestamp\": %q,\n", end.UTC().Format("2006-01-02T15:04:05-0700"))
		fmt.Fprintf(&b, "\t\t\t\t\t\"avg-cpu\":  {\"user\": %.2f, \"nice\": 0.00, \"system\": %.2f, \"iowait\": 0.00, \"steal\": 0.00, \"idle\": %.2f},\n", user, cpu-user, 100-cpu)
		fmt.Fprintf(&b, "\t\t\t\t\t\"disk\": [\n\t\t\t\t\t\t{\"disk_device\": \"vda\", \"r/s\": %.2f, \"w/s\": %.2f, \"d/s\": 0.00, \"rkB/s\": %.2f, \"wkB/s\": %.2f, \"r_await\": 0.40, \"w_await\": 0.60, \"aqu-sz\": %.2f, \"util\": %.2f}\n\t\t\t\t\t]\n",
			5*disk, 15*disk, 40*disk, 120*disk, disk/50, disk)
		if last {
			b.WriteString("\t\t\t\t}\n")
		} else {
			b.WriteString("\t\t\t\t},\n")
		}
	}
	report(s.Start, 3, 1, false) // since boot
	for k := 0; k < s.Total(); k++ {
		report(s.Start.Add(time.Duration(k+1)*time.Second), s.Util(host+"/"+CPU, k), s.Util(host+"/"+Disk, k), k == s.Total()-1)
	}
	b.WriteString("\t\t\t]\n\t\t}\n\t]\n}}\n")
	return []byte(b.String())
}

// NodeExporter is host's data as node_exporter scrapes taken every second
// and concatenated, each after a "# headroom-scrape-time:" marker: one
// CPU and the disk vda, with counters that grow by each second's design
// (busy seconds of the CPU in user and system, the disk's io_time).
func (s *Scenario) NodeExporter(host string) []byte {
	var b strings.Builder
	// Counters as node_exporter exports them, from a machine up for a
	// while.
	idle, user, system, ioTime := 5000.0, 800.0, 200.0, 300.0
	reads, writes := 1e6, 3e6
	for k := 0; k <= s.Total(); k++ {
		if k > 0 {
			cpu, disk := s.Util(host+"/"+CPU, k-1)/100, s.Util(host+"/"+Disk, k-1)/100
			idle += 1 - cpu
			user += 0.8 * cpu
			system += 0.2 * cpu
			ioTime += disk
			reads += float64(int(500 * disk))
			writes += float64(int(1500 * disk))
		}
		fmt.Fprintf(&b, "# headroom-scrape-time: %d\n", s.Start.Add(time.Duration(k)*time.Second).UnixMilli())
		b.WriteString("# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.\n# TYPE node_cpu_seconds_total counter\n")
		for _, m := range []struct {
			mode string
			v    float64
		}{{"idle", idle}, {"iowait", 0}, {"irq", 0}, {"nice", 0}, {"softirq", 0}, {"steal", 0}, {"system", system}, {"user", user}} {
			fmt.Fprintf(&b, "node_cpu_seconds_total{cpu=\"0\",mode=%q} %.6f\n", m.mode, m.v)
		}
		b.WriteString("# TYPE node_disk_io_time_seconds_total counter\n")
		fmt.Fprintf(&b, "node_disk_io_time_seconds_total{device=\"vda\"} %.6f\n", ioTime)
		b.WriteString("# TYPE node_disk_reads_completed_total counter\n")
		fmt.Fprintf(&b, "node_disk_reads_completed_total{device=\"vda\"} %.0f\n", reads)
		b.WriteString("# TYPE node_disk_writes_completed_total counter\n")
		fmt.Fprintf(&b, "node_disk_writes_completed_total{device=\"vda\"} %.0f\n", writes)
		b.WriteString("# TYPE node_uname_info gauge\n")
		fmt.Fprintf(&b, "node_uname_info{domainname=\"(none)\",machine=\"x86_64\",nodename=%q,release=\"6.1.0\",sysname=\"Linux\",version=\"#1 SMP\"} 1\n", host)
	}
	return []byte(b.String())
}

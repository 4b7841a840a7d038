package spec

import (
	"errors"
	"strings"
	"testing"
)

// base is a valid spec; error cases append to it or replace its lines.
const base = "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n"

// noWorkload and noLoad are base without that section, for cases that write
// their own.
const (
	noWorkload = "name: t\ntarget: {type: fake}\nload: {model: open, rates: [100]}\n"
	noLoad     = "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\n"
)

// parseErrors parses src, which must fail, and returns its error lines.
func parseErrors(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse("t.yaml", []byte(src))
	if err == nil {
		t.Fatalf("Parse succeeded, want errors; spec:\n%s", src)
	}
	var es Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("Parse error %T is not a non-empty Errors: %v", err, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(es) {
		t.Errorf("Errors printed %d lines for %d errors:\n%v", len(lines), len(es), err)
	}
	return lines
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // each must be the start of one error line
	}{
		// Unknown keys.
		{"unknown key with suggestion", noWorkload + "workload:\n  ycsb: a\n  recordcount: 5\n",
			[]string{`t.yaml:6: workload.recordcount: unknown field; did you mean "record_count"?`}},
		{"typo in key", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {modle: open, rates: [100]}\n",
			[]string{`t.yaml:4: load.modle: unknown field; did you mean "model"?`}},
		{"unknown key without suggestion", base + "colour: red\n",
			[]string{`t.yaml:5: colour: unknown field; remove it or use one of: name, description, seed, target,`}},
		{"YCSB proportion", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a, readproportion: 0.5}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:3: workload.readproportion: unknown field; YCSB's readproportion is written as operations: {read: 0.5, ...}`}},
		{"duplicate key", base + "seed: 1\nseed: 2\n",
			[]string{`t.yaml:6: seed: duplicate key (first written on line 5); keep only one`}},
		{"merge key", base + "phases:\n  <<: {warmup: 1s}\n",
			[]string{`t.yaml:6: phases: merge keys (<<) are not supported`}},

		// Wrong types.
		{"string in number list", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100, 200, fast]}\n",
			[]string{`t.yaml:4: load.rates[2]: expected a number, got "fast"`}},
		{"quoted number", noWorkload + "workload: {ycsb: a, record_count: \"10\"}\n",
			[]string{`t.yaml:4: workload.record_count: expected a whole number, got "10"`}},
		{"fraction for whole number", base + "repetitions: 2.5\n",
			[]string{`t.yaml:5: repetitions: expected a whole number, got "2.5"`}},
		{"whole number too large", base + "seed: 99999999999999999999\n",
			[]string{`t.yaml:5: seed: 99999999999999999999 is too large`}},
		{"int overflow", noWorkload + "workload: {ycsb: a, field_count: 1e300}\n",
			[]string{`t.yaml:4: workload.field_count: 1e300 is too large; use a smaller number`}},
		{"bool", base + "phases: {populate: yes}\n",
			[]string{`t.yaml:5: phases.populate: expected true or false, got "yes"`}},
		{"list for string", "name: [a]\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:1: name: expected a single value, got a list`}},
		{"scalar for section", base + "phases: 5\n",
			[]string{`t.yaml:5: phases: expected a mapping of fields (key: value), got "5"`}},
		{"infinite number", noWorkload + "workload: {ycsb: a, zipfian_constant: .inf}\n",
			[]string{`t.yaml:4: workload.zipfian_constant: expected a finite number, got ".inf"`}},
		{"list item empty", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: open\n  rates:\n    - 1\n    -\n",
			[]string{`t.yaml:8: load.rates[1]: empty list item; give it a number or remove it`}},
		{"not a mapping at all", "- a\n- b\n",
			[]string{`t.yaml:1: expected a mapping of sections`}},

		// Durations.
		{"bad duration", base + "phases: {measure: 10 sec}\n",
			[]string{`t.yaml:5: phases.measure: expected a duration like "500ms", "10s" or "2m", got "10 sec"`}},
		{"bare number duration", base + "phases: {warmup: 10}\n",
			[]string{`t.yaml:5: phases.warmup: 10 has no unit; write it with one, e.g. "10s" or "10ms"`}},
		{"quoted bare number duration", base + "phases: {warmup: \"1.5\"}\n",
			[]string{`t.yaml:5: phases.warmup: "1.5" has no unit; write it with one, e.g. "1.5s" or "1.5ms"`}},
		{"negative duration", base + "phases: {cooldown: -1s}\n",
			[]string{`t.yaml:5: phases.cooldown: must not be negative, got -1s`}},

		// Enums.
		{"enum typo", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: opne, rates: [100]}\n",
			[]string{`t.yaml:4: load.model: unknown value "opne"; did you mean "open"?`}},
		{"enum far off", base + "order: shuffled\n",
			[]string{`t.yaml:5: order: unknown value "shuffled"; use sequential or randomized`}},
		{"arrival", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100], arrival: burst}\n",
			[]string{`t.yaml:4: load.arrival: unknown value "burst"; use poisson or constant`}},
		{"ycsb preset", "name: t\ntarget: {type: fake}\nworkload: {ycsb: g}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:3: workload.ycsb: unknown YCSB workload "g"; use a, b, c, d, e or f`}},
		{"workload enums", "name: t\ntarget: {type: fake}\nworkload:\n  ycsb: e\n  request_distribution: zipf\n  scan_length_distribution: normal\n  insert_order: random\nload: {model: open, rates: [100]}\n",
			[]string{
				`t.yaml:5: workload.request_distribution: unknown value "zipf"; did you mean "zipfian"?`,
				`t.yaml:6: workload.scan_length_distribution: unknown value "normal"; use uniform or zipfian`,
				`t.yaml:7: workload.insert_order: unknown value "random"; use hashed or ordered`,
			}},

		// Missing and empty.
		{"missing section", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\n",
			[]string{`t.yaml: load: required section is missing; add load: {model: open, rates: [100, 200, 400]}`}},
		{"missing sections", "name: t\n",
			[]string{
				`t.yaml: target: required section is missing; add target: {type: fake}`,
				`t.yaml: workload: required section is missing; add workload: {ycsb: a}`,
				`t.yaml: load: required section is missing`,
			}},
		{"missing name", "target: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml: name: required; add a name`}},
		{"missing model", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  rates: [100]\n",
			[]string{`t.yaml:4: load.model: required; add model: open`}},
		{"empty file", "# nothing yet\n",
			[]string{`t.yaml: the spec is empty; it needs at least name, target, workload and load`}},
		{"no preset nor mix", "name: t\ntarget: {type: fake}\nworkload: {record_count: 10}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:3: workload: needs a YCSB preset, an operation mix or SQL statements`}},

		// Open/closed model conflicts.
		{"open with clients", noLoad + "load: {model: open, rates: [1], clients: [2], think_time: 1s}\n",
			[]string{
				`t.yaml:4: load.clients: only applies to the closed model; remove it or set load.model: closed`,
				`t.yaml:4: load.think_time: only applies to the closed model`,
			}},
		{"closed with open settings", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: closed\n  clients: [1, 2.5]\n  rates: [5]\n  max_in_flight: 8\n  drop_after: 1s\n",
			[]string{
				`t.yaml:6: load.clients[1]: must be a whole number of clients, 1 or more, got 2.5`,
				`t.yaml:7: load.rates: only applies to the open model; remove it or set load.model: open`,
				`t.yaml:8: load.max_in_flight: only applies to the open model`,
				`t.yaml:9: load.drop_after: only applies to the open model`,
			}},
		{"open without rates", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open}\n",
			[]string{`t.yaml:4: load.rates: required for the open model`}},
		{"closed without clients", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: closed}\n",
			[]string{`t.yaml:4: load.clients: required for the closed model`}},
		{"non-positive rate", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [10, 0]}\n",
			[]string{`t.yaml:4: load.rates[1]: must be greater than 0 requests per second, got 0`}},
		{"drop before late", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [1], late_after: 5ms, drop_after: 5ms}\n",
			[]string{`t.yaml:4: load.drop_after: 5ms must be longer than late_after (5ms)`}},
		{"late after above default drop", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: open\n  rates: [1]\n  late_after: 1s\n",
			[]string{`t.yaml:7: load.late_after: 1s must be shorter than drop_after (100ms by default); lower late_after or raise drop_after`}},
		{"max in flight", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [1], max_in_flight: 0, timeout: 0s}\n",
			[]string{
				`t.yaml:4: load.max_in_flight: must be 1 or more, got 0`,
				`t.yaml:4: load.timeout: must be at least 1ms, got 0s`,
			}},

		// Ranges.
		{"range step zero", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: open\n  rates: {from: 1, to: 5, step: 0}\n",
			[]string{`t.yaml:6: load.rates.step: must be greater than 0, got 0`}},
		{"range reversed", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: open\n  rates:\n    from: 10\n    to: 5\n    step: 1\n",
			[]string{`t.yaml:8: load.rates.to: 5 is below from (10); swap them or raise to`}},
		{"range too long", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: {from: 1, to: 1e9, step: 1}}\n",
			[]string{`t.yaml:4: load.rates: this range gives more than 10000 levels; use a larger step`}},
		{"range missing step and typo", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload:\n  model: open\n  rates:\n    from: 1\n    to: 5\n    stpe: 1\n",
			[]string{
				`t.yaml:6: load.rates.step: required in a range; write {from: 100, to: 500, step: 100}`,
				`t.yaml:9: load.rates.stpe: unknown field; did you mean "step"?`,
			}},
		{"range below zero", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: {from: -10, to: 10, step: 10}}\n",
			[]string{`t.yaml:4: load.rates: the range includes -10 requests per second; start it above 0`}},
		{"clients range with fractions", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: closed, clients: {from: 1, to: 2, step: 0.5}}\n",
			[]string{`t.yaml:4: load.clients: the range includes 1.5 clients; use whole numbers`}},
		{"levels scalar", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: 100}\n",
			[]string{`t.yaml:4: load.rates: expected a list like [100, 200, 400] or a range like {from: 100, to: 500, step: 100}, got "100"`}},
		{"levels empty", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: []}\n",
			[]string{`t.yaml:4: load.rates: the list is empty`}},

		// SLO.
		{"slo percentile and op", base + "slo:\n  percentile: 100\n  threshold: 0s\n  operation: reed\n",
			[]string{
				`t.yaml:6: slo.percentile: must be between 0 and 100 (exclusive), got 100`,
				`t.yaml:7: slo.threshold: must be greater than 0, got 0s`,
				`t.yaml:8: slo.operation: unknown operation "reed"; did you mean "read"?`,
			}},
		{"slo missing parts", base + "slo: {operation: scan}\n",
			[]string{
				`t.yaml:5: slo.percentile: required; add percentile: 99`,
				`t.yaml:5: slo.threshold: required; add a latency such as threshold: 50ms`,
			}},

		// Target.
		{"target type typo", "name: t\ntarget: {type: fak}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:2: target.type: unknown target type "fak"; did you mean "fake" (known types: fake, noop, null, tiered)?`}},
		{"target type unknown", "name: t\ntarget:\n  type: mysql\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:3: target.type: unknown target type "mysql"; use one of: fake, noop`}},
		{"target type missing", "name: t\ntarget:\n  path: x\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:2: target.type: required; set it to one of: fake, noop`}},
		{"target option unknown", "name: t\ntarget:\n  type: fake\n  journal: wal\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:4: target.journal: unknown field; did you mean "journal_mode"?`}},
		{"target option for optionless type", "name: t\ntarget:\n  type: noop\n  path: x\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:4: target.path: unknown field; remove it or use one of: type`}},
		{"target option wrong type", "name: t\ntarget:\n  type: fake\n  cache_mb: big\n  busy_timeout: 5\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{
				`t.yaml:4: target.cache_mb: expected a whole number, got "big"`,
				`t.yaml:5: target.busy_timeout: 5 has no unit`,
			}},
		{"target validate names option", "name: t\ntarget:\n  type: fake\n  path: x\n  journal_mode: bogus\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:5: target.journal_mode: unknown value "bogus"; use wal or delete`}},
		{"target validate free text", "name: t\ntarget:\n  type: fake\n  cache_mb: 5000\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:2: target: the cache is larger than the test allows`}},

		// Workload values.
		{"operations", "name: t\ntarget: {type: fake}\nworkload:\n  operations: {reads: 1, update: -1, scan: 0}\nload: {model: open, rates: [100]}\n",
			[]string{
				`t.yaml:4: workload.operations.reads: unknown operation "reads"; did you mean "read"?`,
				`t.yaml:4: workload.operations.update: weight must be 0 or more, got -1`,
			}},
		{"operations sum zero", "name: t\ntarget: {type: fake}\nworkload:\n  operations:\n    read: 0\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:4: workload.operations: the weights add up to 0`}},
		{"workload ranges", "name: t\ntarget: {type: fake}\nworkload:\n  ycsb: a\n  record_count: 0\n  zipfian_constant: 0\n  hotspot_opn_fraction: 1.5\n  max_scan_length: 0\nload: {model: open, rates: [100]}\n",
			[]string{
				`t.yaml:5: workload.record_count: must be 1 or more, got 0`,
				`t.yaml:6: workload.zipfian_constant: must be between 0 and 1 (exclusive), got 0`,
				`t.yaml:7: workload.hotspot_opn_fraction: must be between 0 and 1, got 1.5`,
				`t.yaml:8: workload.max_scan_length: must be 1 or more, got 0`,
			}},

		{"monitor section", "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\nmonitor:\n  interval: 50ms\n  processes: [self, db]\n  cgroups: [headroom/db1]\n  disk: [vda]\n",
			[]string{
				`t.yaml:6: monitor.interval: 50ms is out of range; use 100ms to 60s`,
				`t.yaml:7: monitor.processes[1]: "db" is not a process; use self (Headroom itself) or a process ID`,
				`t.yaml:8: monitor.cgroups[0]: "headroom/db1" must be a path from the cgroup root`,
				`t.yaml:9: monitor.disk: unknown field; did you mean "disks"?`,
			}},

		// Top-level rules.
		{"bad name", "name: my campaign!\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: [100]}\n",
			[]string{`t.yaml:1: name: "my campaign!" is not a valid name; use only letters, digits, '.', '_' and '-', e.g. "my-campaign"`}},
		{"interval out of range", base + "interval: 50ms\nrepetitions: 0\noutput: \"\"\n",
			[]string{
				`t.yaml:5: interval: must be between 100ms and 1m0s, got 50ms`,
				`t.yaml:6: repetitions: must be 1 or more, got 0`,
				`t.yaml:7: output: must not be empty; leave it out to use "results"`,
			}},
		{"measure shorter than interval", base + "interval: 10s\nphases: {measure: 5s}\n",
			[]string{`t.yaml:6: phases.measure: 5s is shorter than one interval (10s); measure for at least 10s or shorten interval`}},
		{"measure zero", base + "phases: {measure: 0}\n",
			[]string{`t.yaml:5: phases.measure: must be greater than 0, got 0s`}},

		// YAML itself.
		{"syntax error", "name: t\nload: {model: open\n",
			[]string{`t.yaml:2: invalid YAML (did not find expected ',' or '}'); check the indentation and quoting`}},
		{"tab indentation", "name: t\nload:\n\tmodel: open\n",
			[]string{`t.yaml:3: invalid YAML (found character that cannot start any token); indent with spaces rather than tabs`}},
		{"two documents", base + "---\nname: u\n",
			[]string{`t.yaml:5: a spec file holds one YAML document; remove the second document that starts here`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := parseErrors(t, tt.src)
			for _, w := range tt.want {
				if !hasPrefixLine(lines, w) {
					t.Errorf("no error line starts with\n  %s\ngot:\n  %s", w, strings.Join(lines, "\n  "))
				}
			}
		})
	}
}

func hasPrefixLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestErrorsAreSortedAndNotRepeated(t *testing.T) {
	src := `name: t
target: {type: fake}
workload: {ycsb: z}
load: [1, 2]
phases: {measure: soon}
colour: red
`
	lines := parseErrors(t, src)
	want := []string{
		`t.yaml:3: workload.ycsb: unknown YCSB workload "z"`,
		`t.yaml:4: load: expected a mapping of fields (key: value), got a list`,
		`t.yaml:5: phases.measure: expected a duration`,
		`t.yaml:6: colour: unknown field`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d (a bad section must not also report its missing fields):\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Line: 3, Path: "load.model", Msg: "m"}, "a.yaml:3: load.model: m"},
		{Error{File: "a.yaml", Path: "load", Msg: "m"}, "a.yaml: load: m"},
		{Error{File: "a.yaml", Line: 1, Msg: "m"}, "a.yaml:1: m"},
		{Error{Line: 2, Path: "x", Msg: "m"}, "line 2: x: m"},
		{Error{Msg: "m"}, "m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
	es := Errors{{File: "f", Line: 1, Msg: "a"}, {File: "f", Line: 2, Msg: "b"}}
	if got := es.Error(); got != "f:1: a\nf:2: b" {
		t.Errorf("Errors.Error() = %q", got)
	}
}

func TestQuotedKeysStayOnOneLine(t *testing.T) {
	lines := parseErrors(t, base+"\"odd\\nkey\": 1\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], `t.yaml:5: "odd\nkey": unknown field`) {
		t.Errorf("got %q", lines)
	}
}

func TestTooManyRuns(t *testing.T) {
	lines := parseErrors(t, "name: t\ntarget: {type: fake}\nworkload: {ycsb: a}\nload: {model: open, rates: {from: 1, to: 1000, step: 1}}\nrepetitions: 1000000000000\n")
	if len(lines) != 1 || lines[0] != "t.yaml:5: repetitions: 1000 levels x 1000000000000 repetitions is more than the 100000 runs a campaign may have; use fewer repetitions or levels" {
		t.Errorf("got %q", lines)
	}
}

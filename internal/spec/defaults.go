package spec

import "time"

// The defaults of a Spec, in one place; docs/spec.md lists the same values.
const (
	defaultSeed        = 1
	defaultRepetitions = 1
	defaultOrder       = "sequential"
	defaultInterval    = time.Second
	defaultOutput      = "results"
	defaultReset       = "none"
	defaultOnFailure   = "continue"

	defaultRecordCount            = 1000
	defaultFieldCount             = 10
	defaultFieldLength            = 100
	defaultZipfianConstant        = 0.99
	defaultHotspotDataFraction    = 0.2
	defaultHotspotOpnFraction     = 0.8
	defaultMaxScanLength          = 100
	defaultScanLengthDistribution = "uniform"
	defaultInsertOrder            = "hashed"

	defaultArrival     = "poisson"
	defaultMaxInFlight = 256
	defaultLateAfter   = time.Millisecond
	defaultDropAfter   = 100 * time.Millisecond
	defaultTimeout     = 10 * time.Second
	defaultDeadAfter   = 5 * time.Second

	defaultWarmup  = 10 * time.Second
	defaultMeasure = 60 * time.Second
)

// defaults is a Spec holding every default. Parse decodes the file over it,
// so a key that is left out keeps its default and one that is written, even
// as a zero value, replaces it.
func defaults() *Spec {
	// Each default has its own variable: the decoder writes through these
	// pointers, so a shared one would make monitor: {cpu: false} turn
	// off memory and all monitoring too.
	readAll, writeAll, populate := true, false, true
	enabled, cpu, memory := true, true, true
	return &Spec{
		Monitor: Monitor{
			Enabled:    &enabled,
			CPU:        &cpu,
			Memory:     &memory,
			Disks:      []string{"all"},
			Interfaces: []string{"all"},
			Processes:  []string{"self"},
		},
		Seed: defaultSeed,
		Workload: Workload{
			RecordCount:            defaultRecordCount,
			FieldCount:             defaultFieldCount,
			FieldLength:            defaultFieldLength,
			ZipfianConstant:        defaultZipfianConstant,
			HotspotDataFraction:    defaultHotspotDataFraction,
			HotspotOpnFraction:     defaultHotspotOpnFraction,
			MaxScanLength:          defaultMaxScanLength,
			ScanLengthDistribution: defaultScanLengthDistribution,
			ReadAllFields:          &readAll,
			WriteAllFields:         &writeAll,
			InsertOrder:            defaultInsertOrder,
		},
		Load: Load{
			Arrival:     defaultArrival,
			MaxInFlight: defaultMaxInFlight,
			LateAfter:   Duration{defaultLateAfter},
			DropAfter:   Duration{defaultDropAfter},
			Timeout:     Duration{defaultTimeout},
			DeadAfter:   Duration{defaultDeadAfter},
		},
		Phases: Phases{
			Populate: &populate,
			Warmup:   Duration{defaultWarmup},
			Measure:  Duration{defaultMeasure},
		},
		Repetitions: defaultRepetitions,
		Order:       defaultOrder,
		Interval:    Duration{defaultInterval},
		Output:      defaultOutput,
		Reset:       defaultReset,
		OnFailure:   defaultOnFailure,
	}
}

// finish completes a valid spec: the order seed falls back to the seed, and
// the open model's settings are cleared under the closed model, where they
// mean nothing.
func finish(s *Spec) {
	if s.OrderSeed == nil {
		seed := s.Seed
		s.OrderSeed = &seed
	}
	if s.Monitor.Interval.Duration == 0 {
		s.Monitor.Interval = s.Interval
	}
	if s.Load.Model == "closed" {
		s.Load.Arrival = ""
		s.Load.MaxInFlight = 0
		s.Load.LateAfter = Duration{}
		s.Load.DropAfter = Duration{}
	}
}

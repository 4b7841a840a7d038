package spec

import (
	"errors"
	"fmt"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// fakeOptions stands in for a real target's options, so that these tests do
// not depend on any concrete target package.
type fakeOptions struct {
	Path        string   `yaml:"path"`
	JournalMode string   `yaml:"journal_mode"`
	CacheMB     int      `yaml:"cache_mb"`
	Busy        Duration `yaml:"busy_timeout"`
	// Managed as every managed target has it (registry.ManagedOf).
	Managed *deploy.Managed `yaml:"managed"`
}

func init() {
	registry.Register(registry.Factory{
		Name:       "fake",
		Summary:    "test target with options",
		NewOptions: func() any { return &fakeOptions{JournalMode: "wal", CacheMB: 64} },
		Validate: func(opts any) error {
			o := opts.(*fakeOptions)
			if o.JournalMode != "wal" && o.JournalMode != "delete" {
				return fmt.Errorf("journal_mode: unknown value %q; use wal or delete", o.JournalMode)
			}
			if o.CacheMB > 1024 {
				return errors.New("the cache is larger than\nthe test allows")
			}
			return nil
		},
		Open: func(any, registry.Env) (target.Target, error) { return nil, errors.New("fake") },
	})
	// noop has no options at all.
	registry.Register(registry.Factory{Name: "noop", Summary: "test target without options"})
	// tiered scales its own nodes, as the apptier target does.
	registry.Register(registry.Factory{Name: "tiered", Summary: "test target whose tier scales", ScalesNodes: true})
}

package sqlite

import (
	"fmt"
	"strings"
	"time"

	"github.com/headroom-dev/headroom/internal/spec"
)

// Options are the sqlite target's spec fields (docs/targets.md).
type Options struct {
	// Path of the database file, relative to the campaign's results
	// directory unless absolute. Default "target.db".
	Path string `yaml:"path"`
	// JournalMode is SQLite's journal_mode: wal (default), delete, truncate,
	// persist, memory or off.
	JournalMode string `yaml:"journal_mode"`
	// Synchronous is SQLite's synchronous setting: off, normal (default), full.
	Synchronous string `yaml:"synchronous"`
	// CacheSizeKiB is the page cache per connection in KiB (default 8192).
	CacheSizeKiB int `yaml:"cache_size_kib"`
	// Connections is the number of open connections shared by all request
	// slots (default 4). Slots beyond it wait for a connection, which counts
	// in their latency, as it would with any connection pool.
	Connections int `yaml:"connections"`
	// BusyTimeout is how long a statement waits for a lock before failing
	// with a "busy" error (default 5s).
	BusyTimeout spec.Duration `yaml:"busy_timeout"`
	// Table is the YCSB table name (default usertable).
	Table string `yaml:"table"`
}

func defaultOptions() *Options {
	return &Options{
		Path:         "target.db",
		JournalMode:  "wal",
		Synchronous:  "normal",
		CacheSizeKiB: 8192,
		Connections:  4,
		BusyTimeout:  spec.Duration{Duration: 5 * time.Second},
		Table:        "usertable",
	}
}

func oneOf(field, v string, allowed ...string) error {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not a valid value; use one of %s", field, v, strings.Join(allowed, ", "))
}

func validate(o any) error {
	opts := o.(*Options)
	if opts.Path == "" {
		return fmt.Errorf("path: must not be empty; give a file name such as target.db")
	}
	// The driver reads a file name up to '?' and its options after it,
	// so such a path would set pragmas the results do not record.
	if i := strings.IndexAny(opts.Path, "?#%\x00"); i >= 0 {
		return fmt.Errorf("path: %q contains %q, which the SQLite driver would read as connection options; give a plain file name (settings go in journal_mode, synchronous, cache_size_kib and busy_timeout)", truncateText(opts.Path, 60), opts.Path[i:i+1])
	}
	if err := oneOf("journal_mode", opts.JournalMode, "wal", "delete", "truncate", "persist", "memory", "off"); err != nil {
		return err
	}
	if err := oneOf("synchronous", opts.Synchronous, "off", "normal", "full", "extra"); err != nil {
		return err
	}
	if opts.Connections < 1 || opts.Connections > 1024 {
		return fmt.Errorf("connections: %d is out of range; use 1 to 1024", opts.Connections)
	}
	if opts.CacheSizeKiB < 0 {
		return fmt.Errorf("cache_size_kib: must not be negative")
	}
	if opts.BusyTimeout.Duration < 0 {
		return fmt.Errorf("busy_timeout: must not be negative")
	}
	for _, r := range opts.Table {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("table: %q may only contain letters, digits and underscores", opts.Table)
		}
	}
	if opts.Table == "" {
		return fmt.Errorf("table: must not be empty")
	}
	return nil
}

// truncateText shortens s to at most n bytes for a message.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

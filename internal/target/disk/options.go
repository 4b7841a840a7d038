package disk

import (
	"fmt"
	"strconv"
	"strings"
)

// Options are the disk target's spec fields (docs/targets.md).
type Options struct {
	// Path of the test file, relative to the campaign's results directory
	// unless absolute. Default "disk.dat". It must be a regular file (or
	// not exist yet); devices are refused.
	Path string `yaml:"path"`
	// Size of the test file with a unit: "256MiB" (default), "1GiB", ...
	// It must be a multiple of BlockSize.
	Size string `yaml:"size"`
	// BlockSize is the size of every operation: "4KiB" (default), a
	// multiple of 512 bytes up to 16MiB.
	BlockSize string `yaml:"block_size"`
	// Direct opens the file with O_DIRECT, bypassing the page cache
	// (default true).
	Direct bool `yaml:"direct"`
	// Sync opens the file with O_DSYNC, so that each write returns only
	// once its data is on stable storage (default false).
	Sync bool `yaml:"sync"`
	// Keep leaves the file in place when the campaign ends (default false:
	// the file is removed).
	Keep bool `yaml:"keep"`
}

const (
	minBlock = 512
	maxBlock = 16 << 20
)

func defaultOptions() *Options {
	return &Options{Path: "disk.dat", Size: "256MiB", BlockSize: "4KiB", Direct: true}
}

// units maps size suffixes (lower case) to bytes. Single letters are binary,
// as in fio and dd; decimal units (KB, MB) are refused as ambiguous.
var units = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gib": 1 << 30,
	"t": 1 << 40, "tib": 1 << 40,
}

// parseSize reads a byte count such as "4KiB", "256MiB", "1GiB" or "4096".
func parseSize(field, s string) (int64, error) {
	v := strings.TrimSpace(s)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	num, unit := v[:i], strings.ToLower(strings.TrimSpace(v[i:]))
	mul, ok := units[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%s: %q is not a size; write a whole number with a binary unit such as 4KiB, 256MiB or 1GiB", field, s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > (1<<62)/mul {
		return 0, fmt.Errorf("%s: %q is too large", field, s)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: must be more than 0 bytes", field)
	}
	return n * mul, nil
}

// sizes returns the file size and block size in bytes, checked.
func (o *Options) sizes() (size, block int64, err error) {
	if block, err = parseSize("block_size", o.BlockSize); err != nil {
		return 0, 0, err
	}
	if block%minBlock != 0 || block > maxBlock {
		return 0, 0, fmt.Errorf("block_size: %s is not a multiple of 512 bytes up to 16MiB; use for example 4KiB, 64KiB or 1MiB", o.BlockSize)
	}
	if size, err = parseSize("size", o.Size); err != nil {
		return 0, 0, err
	}
	if size < block || size%block != 0 {
		return 0, 0, fmt.Errorf("size: %s is not a whole number of blocks of block_size %s; use a multiple of the block size", o.Size, o.BlockSize)
	}
	return size, block, nil
}

func validate(o any) error {
	opts := o.(*Options)
	if strings.TrimSpace(opts.Path) == "" {
		return fmt.Errorf("path: must not be empty; give a file name such as disk.dat")
	}
	if _, _, err := opts.sizes(); err != nil {
		return err
	}
	if opts.Direct && !directSupported {
		return fmt.Errorf("direct: O_DIRECT is only supported on Linux; set direct: false")
	}
	return nil
}

//go:build !linux

package disk

import (
	"os"
	"syscall"
)

const (
	directSupported = false
	directFlag      = 0
	dsyncFlag       = syscall.O_SYNC
)

func preallocate(f *os.File, size int64) error { return f.Truncate(size) }

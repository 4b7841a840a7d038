package disk

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

const (
	directSupported = true
	directFlag      = unix.O_DIRECT
	dsyncFlag       = unix.O_DSYNC
)

// preallocate reserves size bytes for f, falling back to extending it when
// the filesystem cannot fallocate.
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}

// Package regularfile opens files a user names for reading (a trace, a
// file to import) only when they are regular files, so that a FIFO, a
// device or a directory gets one sentence instead of a read that blocks
// forever or never ends (issue 36).
package regularfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading. The open itself does not wait for a FIFO's
// writer (O_NONBLOCK, which a regular file's reads ignore); what it opened
// is then checked on the descriptor, so a file swapped after a check by
// name cannot get through.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s, not a regular file; give a file", path, kind(fi.Mode()))
	}
	return f, nil
}

// kind names a file type for a message.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

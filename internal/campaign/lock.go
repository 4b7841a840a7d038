package campaign

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the file in a results directory whose advisory lock marks
// the one process writing into it.
const LockFile = ".headroom.lock"

// dirLock is an exclusive advisory lock on a results directory. The kernel
// releases it when the process ends, however it ends, so a crashed run
// never leaves the directory locked.
type dirLock struct{ f *os.File }

// lockDir takes dir's lock without waiting. When another process holds it
// the error names that process, so that two `run --resume` on the same
// directory cannot both run the same slots against the same target.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cannot create the lock file %s: %w (the results directory must be writable)", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who := "another process"
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(holder))); perr == nil && pid > 0 {
				who = fmt.Sprintf("another headroom process (PID %d)", pid)
			}
			return nil, fmt.Errorf("%s is in use by %s; wait for it to finish or stop it, then try again", dir, who)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	// The PID is only for the message above; the lock itself is the flock.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &dirLock{f: f}, nil
}

// release drops the lock; nil-safe.
func (l *dirLock) release() {
	if l != nil && l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

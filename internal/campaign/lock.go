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

// dirLock is the exclusive advisory locks (flock) marking the one process
// that writes a results directory: on the directory itself, on the side
// file LockFile (which also holds the PID, and is all that older builds
// lock), and on the results database when it exists. Deleting the side
// file therefore unlocks nothing, and a database moved to another
// directory stays locked. flock locks are not the POSIX (fcntl) locks
// SQLite takes, so they never block a reader or SQLite's own locking. The
// kernel releases them when the process ends, however it ends, so a
// crashed run never leaves the directory locked.
type dirLock struct{ files []*os.File }

// lockDir takes dir's locks without waiting. When another process holds
// one the error names that process, so that two `run --resume` on the same
// directory cannot both run the same slots against the same target.
func lockDir(dir string) (*dirLock, error) {
	l := &dirLock{}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the results directory %s to lock it: %w", dir, err)
	}
	if err := l.take(d, dir); err != nil {
		return nil, err
	}
	side := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(side, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		l.release()
		return nil, fmt.Errorf("cannot create the lock file %s: %w (the results directory must be writable)", side, err)
	}
	if err := l.take(f, dir); err != nil {
		l.release()
		return nil, err
	}
	// Opened only once the directory is locked: closing a descriptor of
	// the database drops every POSIX lock this process holds on it, so it
	// must not be closed under a store this process has open (release
	// runs after the session closed its store).
	if db, err := os.Open(filepath.Join(dir, StoreFile)); err == nil {
		if err := l.take(db, dir); err != nil {
			l.release()
			return nil, err
		}
	}
	// The PID is only for the message; the locks are the flocks.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return l, nil
}

// take flocks f and keeps it, or closes it and says who holds it.
func (l *dirLock) take(f *os.File, dir string) error {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		pid := lockHolder(f, dir)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			who := "another process"
			if pid > 0 {
				who = fmt.Sprintf("another headroom process (PID %d)", pid)
			}
			return fmt.Errorf("%s is in use by %s; wait for it to finish or stop it, then try again", dir, who)
		}
		return fmt.Errorf("cannot lock %s: %w", f.Name(), err)
	}
	l.files = append(l.files, f)
	return nil
}

// lockHolder is the PID of the process holding the flock on f: the one the
// kernel lists for f's inode in /proc/locks, else the one written in the
// side file; 0 when neither says.
func lockHolder(f *os.File, dir string) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err == nil {
		if b, err := os.ReadFile("/proc/locks"); err == nil {
			// e.g. "1: FLOCK  ADVISORY  WRITE 27318 fe:00:10030435 0 EOF"
			id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
			for _, line := range strings.Split(string(b), "\n") {
				fs := strings.Fields(line)
				if len(fs) >= 6 && fs[1] == "FLOCK" && fs[5] == id {
					if pid, err := strconv.Atoi(fs[4]); err == nil && pid > 0 {
						return pid
					}
				}
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, LockFile))
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
		return pid
	}
	return 0
}

// release drops the locks; nil-safe.
func (l *dirLock) release() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		_ = f.Close()
	}
	l.files = nil
}

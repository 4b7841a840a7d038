package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// fileID is a file's identity: what its path names can change (a file
// deleted, moved or replaced) while an open file stays the same inode.
type fileID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	return fileID{}
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, fmt.Errorf("cannot open results database %s: %w", path, err)
	}
	return idOf(fi), nil
}

// beforeWrite runs before every write transaction. It refuses to write a
// damaged store or a file that is no longer at its path (SQLite would go on
// writing the deleted inode, and the results would vanish when the process
// exits), and makes the migrations on the first write.
func (s *Store) beforeWrite() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost != nil {
		return s.lost
	}
	if s.damage != nil {
		return s.damage
	}
	fi, err := os.Stat(s.path)
	switch {
	case err == nil && idOf(fi) == s.file:
	case err == nil || errors.Is(err, fs.ErrNotExist):
		s.lost = s.fileLost()
		return s.lost
	default:
		return fmt.Errorf("results database %s cannot be checked before writing (%v); check the file and its directory", s.path, err)
	}
	if !s.migrated {
		for _, q := range migrations {
			if _, err := s.db.Exec(q); err != nil {
				if code(err) == sqlite3.SQLITE_CONSTRAINT {
					// The rows already break the rule the index states.
					d, cerr := s.check()
					if cerr != nil {
						return cerr
					}
					if d != nil {
						s.damage = d
						return d
					}
				}
				return s.fail("adding the indexes of this version", err)
			}
		}
		s.migrated = true
	}
	return nil
}

// fileLost says where the data of a file no longer at s.path still is:
// at the name it was moved to, else in a copy this process makes now from
// its open connection (which sees every committed write, WAL included).
func (s *Store) fileLost() error {
	fd, now := s.openCopy()
	if now != "" && !strings.HasSuffix(now, " (deleted)") {
		if id, err := statID(now); err == nil && id == s.file {
			return fmt.Errorf("results database %s was moved to %s during the run; the data measured so far is there, so stop this run, move it back and resume the campaign", s.path, now)
		}
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	name := strings.TrimSuffix(filepath.Base(s.path), ".db") + "-rescued-" + stamp + ".db"
	for _, dir := range []string{filepath.Dir(s.path), os.TempDir()} {
		rescue := filepath.Join(dir, name)
		if _, err := s.db.Exec(`VACUUM INTO ?`, rescue); err == nil {
			return fmt.Errorf("results database %s was deleted or replaced during the run; everything measured up to now was saved to %s, so stop this run, put that file at %s and resume the campaign", s.path, rescue, s.path)
		}
	}
	if fd != "" {
		return fmt.Errorf("results database %s was deleted or replaced during the run and no copy could be saved; the data measured so far is only in %s, so copy it elsewhere before this process exits", s.path, fd)
	}
	return fmt.Errorf("results database %s was deleted or replaced during the run and no copy could be saved; the data measured so far is lost when this process exits", s.path)
}

// openCopy finds this process's descriptor of the file it opened (Linux
// /proc): its /proc path, and the name the kernel now gives that file.
func (s *Store) openCopy() (fdPath, name string) {
	const dir = "/proc/self/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", ""
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if id, err := statID(p); err != nil || id != s.file {
			continue
		}
		target, _ := os.Readlink(p)
		return "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + e.Name(), target
	}
	return "", ""
}

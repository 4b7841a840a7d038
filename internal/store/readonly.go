package store

// OpenReadOnly opens an existing results database that this process only
// reads: SQLite itself refuses every write through it, so a reader that
// must leave the file as it found it (the explorer) cannot change it by
// mistake. Other processes may still write the file meanwhile (WAL). As
// with any read-only SQLite reader of a WAL file, the -wal and -shm files
// beside it may be left behind when it closes; they hold no results.
func OpenReadOnly(path string) (*Store, error) { return open(path, "ro") }

package store

import "database/sql"

// write runs fn in one transaction and commits it, so that a reader sees
// all of fn's writes or none. The statements in ddl run first, in the same
// transaction: the CREATE TABLE IF NOT EXISTS of tables that came after
// schema version 1 and are made on first use. Failures to begin, create or
// commit are worded as doing; fn words its own errors (s.fail).
func (s *Store) write(doing string, ddl []string, fn func(tx *sql.Tx) error) error {
	if err := s.beforeWrite(); err != nil {
		return err
	}
	tx, err := s.db.Begin()
	if err != nil {
		return s.fail(doing, err)
	}
	defer tx.Rollback()
	for _, q := range ddl {
		if _, err := tx.Exec(q); err != nil {
			return s.fail(doing, err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.fail(doing, err)
	}
	return nil
}

// hasTable reports whether the file has the named table; readers of the
// tables made on first use treat a file without one as holding no rows.
// A failure is worded as doing.
func (s *Store) hasTable(doing, name string) (bool, error) {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		return false, s.fail(doing, err)
	}
	return n > 0, nil
}

// readAll runs query q and returns one value a row, made by scan. Every
// failure, scan's included, is worded as doing.
func readAll[T any](s *Store, doing, q string, args []any, scan func(rows *sql.Rows) (T, error)) ([]T, error) {
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, s.fail(doing, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, s.fail(doing, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(doing, err)
	}
	return out, nil
}

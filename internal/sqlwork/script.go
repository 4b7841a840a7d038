package sqlwork

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
)

// scriptStmt is one statement of an SQL script and the line it starts on.
type scriptStmt struct {
	SQL  string
	Line int
}

// splitScript cuts an SQL script into statements at top-level semicolons,
// the way the dialect's command-line client does: semicolons inside quoted
// text, identifiers, comments and PostgreSQL dollar quotes do not count;
// MySQL's client-side DELIMITER command changes the delimiter (for
// procedures and triggers); SQLite's CREATE TRIGGER ... BEGIN ...; END is
// one statement. Comments before a statement are dropped; statements
// holding only comments are skipped. psql meta-commands (\connect, ...) are
// errors, since there is no psql to run them.
func splitScript(src string, d Dialect) ([]scriptStmt, error) {
	l := newLexer(src, d, ";")
	var out []scriptStmt
	start, last, line := -1, 0, 0
	var words []string // the first words of the statement, upper case
	depth := 0         // BEGIN ... END nesting inside an SQLite trigger
	trigger := false
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		switch t.kind {
		case tokEOF, tokDelim:
			if start >= 0 && (t.kind == tokEOF || depth == 0) {
				out = append(out, scriptStmt{SQL: src[start:last], Line: line})
				start, words, depth, trigger = -1, words[:0], 0, false
			}
			if t.kind == tokEOF {
				return out, nil
			}
			continue
		}
		if start < 0 {
			if t.kind == tokPunct && src[t.start] == '\\' && d == Postgres {
				end := strings.IndexAny(src[t.start:], " \t\r\n")
				if end < 0 {
					end = len(src) - t.start
				}
				return nil, fmt.Errorf("line %d: %s is a psql meta-command, not SQL; remove it (the script runs statement by statement, without psql)", t.line, src[t.start:t.start+end])
			}
			if t.kind == tokWord && d == MySQL && strings.EqualFold(l.text(t), "DELIMITER") {
				if err := setDelimiter(l, t); err != nil {
					return nil, err
				}
				continue
			}
			start, line = t.start, t.line
		}
		last = t.end
		if t.kind != tokWord {
			continue
		}
		w := strings.ToUpper(l.text(t))
		if len(words) < 4 {
			words = append(words, w)
			trigger = trigger || d == SQLite && isCreateTrigger(words)
		}
		if trigger {
			switch w {
			case "BEGIN", "CASE":
				depth++
			case "END":
				depth = max(depth-1, 0)
			}
		}
	}
}

// isCreateTrigger reports whether a statement's first words are CREATE
// [TEMP|TEMPORARY] TRIGGER.
func isCreateTrigger(w []string) bool {
	if len(w) < 2 || w[0] != "CREATE" {
		return false
	}
	if w[1] == "TEMP" || w[1] == "TEMPORARY" {
		return len(w) >= 3 && w[2] == "TRIGGER"
	}
	return w[1] == "TRIGGER"
}

// setDelimiter handles a MySQL client "DELIMITER xx" line: the rest of the
// line's first word becomes the delimiter.
func setDelimiter(l *lexer, t token) error {
	rest := l.src[t.end:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[:nl]
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return fmt.Errorf("line %d: DELIMITER needs the new delimiter, e.g. DELIMITER //", t.line)
	}
	l.delim = f[0]
	l.pos = t.end + len(rest)
	return nil
}

// readScript reads and splits the script file named in spec field field.
func readScript(field, path string, d Dialect) ([]scriptStmt, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the script: %v", field, err)
	}
	stmts, err := splitScript(string(b), d)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %v", field, path, err)
	}
	return stmts, nil
}

// firstWord returns the first keyword of a statement in upper case.
func firstWord(sql string, d Dialect) string {
	l := newLexer(sql, d, "")
	for {
		t, err := l.next()
		if err != nil || t.kind == tokEOF {
			return ""
		}
		if t.kind == tokWord {
			return strings.ToUpper(l.text(t))
		}
		if t.kind != tokPunct || sql[t.start] != '(' {
			return ""
		}
	}
}

// controlsTransactions reports whether a script manages its own
// transactions (or locks), in which case it must not be wrapped in ours.
func controlsTransactions(stmts []scriptStmt, d Dialect) bool {
	for _, s := range stmts {
		switch firstWord(s.SQL, d) {
		case "BEGIN", "START", "COMMIT", "ROLLBACK", "END", "SAVEPOINT", "RELEASE", "LOCK", "UNLOCK":
			return true
		}
	}
	return false
}

// scriptTxStatements is how many statements of a populate script run in
// one transaction: an INSERT script run one autocommit at a time is slow
// (one log flush per row), which is not what population should measure.
const scriptTxStatements = 1000

// runScript executes the statements of a script one by one on a single
// connection (so that session settings and the script's own transactions
// hold). With batch, statements are grouped in transactions of
// scriptTxStatements, unless the script manages transactions itself.
// done is called after each committed group with the statements run.
func runScript(ctx context.Context, db *sql.DB, d Dialect, field, path string, stmts []scriptStmt, batch bool, done func(n int64)) error {
	for _, s := range stmts {
		if d == Postgres && firstWord(s.SQL, d) == "COPY" && strings.Contains(strings.ToUpper(s.SQL), "STDIN") {
			return fmt.Errorf("%s: %s line %d: COPY ... FROM stdin needs psql; write INSERT statements instead (pg_dump --inserts)", field, path, s.Line)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s: connecting to run %s: %w", field, path, err)
	}
	defer conn.Close()
	batch = batch && !controlsTransactions(stmts, d)
	var tx *sql.Tx
	pending := int64(0)
	commit := func() error {
		if tx != nil {
			err := tx.Commit()
			tx = nil
			if err != nil {
				return err
			}
		}
		if done != nil && pending > 0 {
			done(pending)
		}
		pending = 0
		return nil
	}
	for _, s := range stmts {
		if batch && tx == nil {
			if tx, err = conn.BeginTx(ctx, nil); err != nil {
				return fmt.Errorf("%s: %s line %d: starting a transaction: %w", field, path, s.Line, err)
			}
		}
		if tx != nil {
			_, err = tx.ExecContext(ctx, s.SQL)
		} else {
			_, err = conn.ExecContext(ctx, s.SQL)
		}
		if err != nil {
			if tx != nil {
				tx.Rollback()
			}
			return fmt.Errorf("%s: %s line %d: %w", field, path, s.Line, err)
		}
		pending++
		if !batch || pending == scriptTxStatements {
			if err := commit(); err != nil {
				return fmt.Errorf("%s: %s line %d: committing: %w", field, path, s.Line, err)
			}
		}
	}
	if err := commit(); err != nil {
		return fmt.Errorf("%s: %s: committing: %w", field, path, err)
	}
	return nil
}

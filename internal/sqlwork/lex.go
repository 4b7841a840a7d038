package sqlwork

import (
	"fmt"
	"strings"
)

// tokKind classifies the tokens of the small SQL lexer below. It knows only
// what splitting scripts and finding statement keywords need: words, quoted
// text, single punctuation characters and the statement delimiter.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // keyword, bare identifier or number
	tokQuoted         // '...', "...", `...`, [...], $tag$...$tag$, E'...'
	tokPunct          // any other single character
	tokDelim          // the statement delimiter (";" unless a MySQL DELIMITER changed it)
	tokHint           // a MySQL /*! ... */ comment, which the server executes
)

type token struct {
	kind       tokKind
	start, end int // byte offsets in the source
	line       int // 1-based line of start
}

// lexer walks SQL text token by token, skipping whitespace and comments.
type lexer struct {
	src   string
	pos   int
	line  int
	d     Dialect
	delim string // "" means no delimiter token (single statements)
}

func newLexer(src string, d Dialect, delim string) *lexer {
	return &lexer{src: src, line: 1, d: d, delim: delim}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// text returns the source text of t.
func (l *lexer) text(t token) string { return l.src[t.start:t.end] }

// next returns the next token, or an error for an unterminated quote or
// comment, naming the line it starts on.
func (l *lexer) next() (token, error) {
	if err := l.skipSpace(); err != nil {
		return token{}, err
	}
	s, i := l.src, l.pos
	t := token{start: i, line: l.line}
	if i >= len(s) {
		t.kind = tokEOF
		t.end = i
		return t, nil
	}
	if l.delim != "" && strings.HasPrefix(s[i:], l.delim) {
		l.pos = i + len(l.delim)
		t.kind, t.end = tokDelim, l.pos
		return t, nil
	}
	c := s[i]
	switch {
	case c == '\'' || c == '"' || c == '`':
		return l.quoted(t, c, c, l.backslashes(c, false))
	case c == '[' && l.d == SQLite:
		return l.quoted(t, '[', ']', false)
	case c == '$' && l.d == Postgres:
		if tag, ok := dollarTag(s[i:]); ok {
			end := strings.Index(s[i+len(tag):], tag)
			if end < 0 {
				return t, fmt.Errorf("line %d: dollar-quoted text opened with %s is never closed", t.line, tag)
			}
			l.advance(i + len(tag) + end + len(tag))
			t.kind, t.end = tokQuoted, l.pos
			return t, nil
		}
	case c == '/' && l.d == MySQL && strings.HasPrefix(s[i:], "/*!"):
		end := strings.Index(s[i+3:], "*/")
		if end < 0 {
			return t, fmt.Errorf("line %d: comment /*! is never closed", t.line)
		}
		l.advance(i + 3 + end + 2)
		t.kind, t.end = tokHint, l.pos
		return t, nil
	}
	if isWordByte(c) {
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		// A MySQL delimiter such as $$ may follow a word directly (END$$).
		if l.delim != "" {
			if k := strings.Index(s[i:j], l.delim); k > 0 {
				j = i + k
			}
		}
		// E'...' is PostgreSQL's escape string, where \ escapes.
		if l.d == Postgres && j == i+1 && (c == 'E' || c == 'e') && j < len(s) && s[j] == '\'' {
			l.pos = j
			return l.quoted(t, '\'', '\'', true)
		}
		l.pos = j
		t.kind, t.end = tokWord, j
		return t, nil
	}
	l.pos = i + 1
	t.kind, t.end = tokPunct, l.pos
	return t, nil
}

// backslashes reports whether \ escapes inside quotes opened by q: in
// MySQL's strings and identifiers (by default), in PostgreSQL's E'...' strings
// only, never in SQLite.
func (l *lexer) backslashes(q byte, escapeString bool) bool {
	return escapeString || l.d == MySQL && q != '`'
}

// quoted consumes text from the opening quote at l.pos to its closing
// quote; a doubled quote inside stands for the quote itself.
func (l *lexer) quoted(t token, open, close byte, backslash bool) (token, error) {
	s := l.src
	j := l.pos + 1
	for ; j < len(s); j++ {
		if backslash && s[j] == '\\' {
			j++
			continue
		}
		if s[j] == close {
			if open != close || j+1 == len(s) || s[j+1] != close {
				break
			}
			j++ // a doubled quote stands for itself
		}
	}
	if j >= len(s) {
		return t, fmt.Errorf("line %d: quoted text opened with %c is never closed", t.line, open)
	}
	l.advance(j + 1)
	t.kind, t.end = tokQuoted, l.pos
	return t, nil
}

// advance moves to end, counting the newlines passed.
func (l *lexer) advance(end int) {
	l.line += strings.Count(l.src[l.pos:end], "\n")
	l.pos = end
}

// skipSpace skips whitespace and comments: -- to the end of the line (in
// MySQL only when followed by a space, and # too), and /* */ (nested in
// PostgreSQL).
func (l *lexer) skipSpace() error {
	s := l.src
	for l.pos < len(s) {
		i := l.pos
		c := s[i]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '-' && strings.HasPrefix(s[i:], "--") && (l.d != MySQL || i+2 == len(s) || s[i+2] <= ' '),
			c == '#' && l.d == MySQL:
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				end = len(s) - i
			}
			l.pos = i + end
		case c == '/' && strings.HasPrefix(s[i:], "/*") && !(l.d == MySQL && strings.HasPrefix(s[i:], "/*!")):
			depth, j := 1, i+2
			for j < len(s) && depth > 0 {
				switch {
				case strings.HasPrefix(s[j:], "*/"):
					depth--
					j += 2
				case l.d == Postgres && strings.HasPrefix(s[j:], "/*"):
					depth++
					j += 2
				default:
					j++
				}
			}
			if depth > 0 {
				return fmt.Errorf("line %d: comment /* is never closed", l.line)
			}
			l.advance(j)
		default:
			return nil
		}
	}
	return nil
}

// dollarTag returns the opening tag of a PostgreSQL dollar quote at the
// start of s ($$ or $name$), if there is one. $1 is a parameter, not a tag.
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1], true
		}
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || j > 1 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return "", false
}

// unquote returns the identifier inside quotes, or the bare word as is.
func unquote(s string) string {
	if len(s) >= 2 {
		switch s[0] {
		case '"', '`':
			q := string(s[0])
			return strings.ReplaceAll(s[1:len(s)-1], q+q, q)
		case '[':
			return s[1 : len(s)-1]
		}
	}
	return s
}

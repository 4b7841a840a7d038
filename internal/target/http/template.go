package httptarget

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/headroom-dev/headroom/internal/workload"
)

// placeholder is what a template segment renders.
type placeholder uint8

const (
	literal      placeholder = iota
	phKey                    // {key}: op.Key
	phKeyNum                 // {keynum}: op.KeyNum in decimal
	phField                  // {field}: op.Field, or 0 when the op covers all fields
	phValue                  // {value}: op.Values[op.Field], or the first value
	phScanLen                // {scan_length}: op.ScanLength
	phFieldsJSON             // {fields_json}: {"field0":"...",...} of the op's values
)

var placeholders = map[string]placeholder{
	"key":         phKey,
	"keynum":      phKeyNum,
	"field":       phField,
	"value":       phValue,
	"scan_length": phScanLen,
	"fields_json": phFieldsJSON,
}

// placeholderNames lists the placeholders for error messages.
const placeholderNames = "{key}, {keynum}, {field}, {value}, {scan_length}, {fields_json}"

// segment is a literal text or a placeholder.
type segment struct {
	ph  placeholder
	lit string
}

// template is a pre-parsed path or body template.
type template struct {
	segs []segment
	text string // the whole template when it has no placeholders
}

func (t *template) static() bool {
	return len(t.segs) <= 1 && (len(t.segs) == 0 || t.segs[0].ph == literal)
}

// parseTemplate splits s into literals and placeholders. A placeholder is a
// word of letters, digits and underscores in braces; any other brace (as in
// JSON) is literal text. An unknown word is an error naming it.
func parseTemplate(field, s string) (*template, error) {
	t := &template{}
	lit := 0 // start of the pending literal
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j == i+1 || j >= len(s) || s[j] != '}' {
			continue
		}
		name := s[i+1 : j]
		ph, ok := placeholders[name]
		if !ok {
			return nil, fmt.Errorf("%s: unknown placeholder {%s}; use %s", field, name, placeholderNames)
		}
		if lit < i {
			t.segs = append(t.segs, segment{lit: s[lit:i]})
		}
		t.segs = append(t.segs, segment{ph: ph})
		lit = j + 1
		i = j
	}
	if lit < len(s) {
		t.segs = append(t.segs, segment{lit: s[lit:]})
	}
	if t.static() {
		t.text = s
	}
	return t, nil
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// render appends t filled from op to dst. With escape, placeholder values are
// percent-escaped for a URL path or query (literal text is kept as written).
func (t *template) render(dst []byte, op *workload.Op, escape bool) []byte {
	for _, s := range t.segs {
		switch s.ph {
		case literal:
			dst = append(dst, s.lit...)
		case phKey:
			dst = appendMaybeEscaped(dst, op.Key, escape)
		case phKeyNum:
			dst = strconv.AppendUint(dst, op.KeyNum, 10)
		case phField:
			dst = strconv.AppendInt(dst, int64(max(op.Field, 0)), 10)
		case phValue:
			dst = appendMaybeEscaped(dst, opValue(op), escape)
		case phScanLen:
			dst = strconv.AppendInt(dst, int64(op.ScanLength), 10)
		case phFieldsJSON:
			dst = appendFieldsJSON(dst, op, escape)
		}
	}
	return dst
}

// opValue is the value of the field an op writes or reads, or its first
// value when it covers every field.
func opValue(op *workload.Op) []byte {
	if op.Field >= 0 && op.Field < len(op.Values) {
		return op.Values[op.Field]
	}
	if len(op.Values) > 0 {
		return op.Values[0]
	}
	return nil
}

// appendFieldsJSON appends {"fieldN":"value",...} for every field the op
// covers (op.Field alone, or all). Workload values are printable and hold no
// quote or backslash, so they need no JSON escaping.
func appendFieldsJSON(dst []byte, op *workload.Op, escape bool) []byte {
	dst = append(dst, '{')
	first := true
	for f, v := range op.Values {
		if op.Field >= 0 && f != op.Field {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `"field`...)
		dst = strconv.AppendInt(dst, int64(f), 10)
		dst = append(dst, `":"`...)
		dst = appendMaybeEscaped(dst, v, escape)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

const hexDigits = "0123456789ABCDEF"

// appendMaybeEscaped appends b, percent-escaping every byte but RFC 3986's
// unreserved ones when escape is set (safe in a path segment and a query).
func appendMaybeEscaped(dst, b []byte, escape bool) []byte {
	if !escape {
		return append(dst, b...)
	}
	for _, c := range b {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// compiled is a validated request template.
type compiled struct {
	method string
	path   *template
	body   *template // nil: no body
	// bodyText is the body when it has no placeholders, shared read-only by
	// every client.
	bodyText []byte
	header   http.Header
}

// compileRequest checks and pre-parses the template of operation type t.
func compileRequest(t workload.OpType, r *Request) (*compiled, error) {
	name := t.String()
	c := &compiled{method: r.Method}
	if c.method == "" {
		c.method = defaultMethods[t]
	}
	if !validToken(c.method) {
		return nil, fmt.Errorf("%s.method: %q is not an HTTP method; use GET, PUT, POST, DELETE, PATCH or another method name", name, c.method)
	}
	if !strings.HasPrefix(r.Path, "/") || strings.HasPrefix(r.Path, "//") {
		return nil, fmt.Errorf("%s.path: %q must start with a single /, e.g. \"/users/{key}\"", name, r.Path)
	}
	if strings.ContainsAny(r.Path, " #\r\n\t\x00") {
		return nil, fmt.Errorf("%s.path: %q must not contain spaces, control characters or #; percent-escape them", name, r.Path)
	}
	var err error
	if c.path, err = parseTemplate(name+".path", r.Path); err != nil {
		return nil, err
	}
	if r.Body != "" {
		if c.body, err = parseTemplate(name+".body", r.Body); err != nil {
			return nil, err
		}
		if c.body.static() {
			c.bodyText = []byte(r.Body)
		}
	}
	if err := checkHeaders(name+".headers", r.Headers); err != nil {
		return nil, err
	}
	c.header = make(http.Header, len(r.Headers))
	for k, v := range r.Headers {
		c.header.Set(k, v)
	}
	return c, nil
}

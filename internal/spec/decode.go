package spec

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// DecodeNode decodes node strictly into dst, which must be a non-nil pointer
// to a value whose structs name their keys with `yaml` tags (an untagged
// exported field uses its lower-cased name; a "-" tag is skipped). path is
// the field path of node in the whole document ("" for the root, or e.g.
// "target") and prefixes every error path. Unknown keys, duplicate keys and
// values of the wrong type are errors. A struct field whose key is absent, or
// present with an empty value, keeps dst's current value, so filling dst
// with defaults first gives "default unless written". It returns every
// problem found, or nil.
func DecodeNode(file string, node *yaml.Node, path string, dst any) Errors {
	d := newDecoder(file)
	rv := reflect.ValueOf(dst)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		d.fail(0, path, "cannot decode into %T, which is not a non-nil pointer; this is a bug in Headroom", dst)
		return d.errs
	}
	if node != nil && node.Kind == yaml.DocumentNode {
		if len(node.Content) == 0 {
			return nil
		}
		node = node.Content[0]
	}
	if node != nil {
		d.value(node, node.Line, path, rv.Elem())
	}
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs.capped(file)
}

// maxDepth bounds recursion for self-referential Go types; the spec's own
// types are far shallower.
const maxDepth = 64

// decoder walks a yaml.Node tree alongside a Go value.
type decoder struct {
	file string
	errs Errors
	// lines maps the path of every non-empty value decoded to the line of
	// its key (or list item). Validation uses it to place its errors and to
	// tell "left out" from "written as the default value".
	lines map[string]int
	depth int
}

func newDecoder(file string) *decoder {
	return &decoder{file: file, lines: map[string]int{}}
}

func (d *decoder) fail(line int, path, format string, args ...any) {
	add(&d.errs, &Error{File: d.file, Line: line, Path: path, Msg: oneLine(fmt.Sprintf(format, args...))})
}

var (
	durationType     = reflect.TypeFor[Duration]()
	timeDurationType = reflect.TypeFor[time.Duration]()
	levelsType       = reflect.TypeFor[Levels]()
	targetType       = reflect.TypeFor[Target]()
)

// value decodes n into v. line is where the value's key (or list item) is
// written, which is where a reader looks for it.
func (d *decoder) value(n *yaml.Node, line int, path string, v reflect.Value) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return
	}
	d.lines[path] = line
	if tag := n.ShortTag(); !strings.HasPrefix(tag, "!!") {
		d.fail(n.Line, path, "YAML tags such as %s are not supported here; remove the tag", truncate(tag, 40))
		return
	}
	if d.depth >= maxDepth {
		d.fail(n.Line, path, "nested too deeply; flatten this value")
		return
	}
	d.depth++
	defer func() { d.depth-- }()

	switch v.Type() {
	case durationType:
		if dur, ok := d.duration(n, path); ok {
			v.Set(reflect.ValueOf(Duration{dur}))
		}
		return
	case timeDurationType:
		if dur, ok := d.duration(n, path); ok {
			v.SetInt(int64(dur))
		}
		return
	case levelsType:
		d.levels(n, path, v)
		return
	case targetType:
		d.target(n, path, v.Addr().Interface().(*Target))
		return
	}

	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.value(n, line, path, v.Elem())
	case reflect.Struct:
		d.structure(n, path, v, "")
	case reflect.Slice:
		d.sequence(n, path, v)
	case reflect.Map:
		d.mapping(n, path, v)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.fail(n.Line, path, "expected a single value, got %s", describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.fail(n.Line, path, "expected true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i, ok := d.integer(n, path); ok {
			if v.OverflowInt(i) {
				d.fail(n.Line, path, "%d is out of range for this field; use a smaller number", i)
				return
			}
			v.SetInt(i)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if i, ok := d.integer(n, path); ok {
			if i < 0 || v.OverflowUint(uint64(i)) {
				d.fail(n.Line, path, "%d is out of range for this field; use a number from 0 up", i)
				return
			}
			v.SetUint(uint64(i))
		}
	case reflect.Float32, reflect.Float64:
		if f, ok := d.float(n, path); ok {
			if v.OverflowFloat(f) {
				d.fail(n.Line, path, "%g is out of range for this field; use a smaller number", f)
				return
			}
			v.SetFloat(f)
		}
	default:
		d.fail(n.Line, path, "cannot decode into Go type %s; this is a bug in Headroom", v.Type())
	}
}

// full reports whether the decoder keeps no more errors (see add), so that
// an error's message need not be worked out.
func (d *decoder) full() bool {
	return len(d.errs) >= maxKept
}

// structure decodes a mapping into the tagged fields of struct v. The key
// named skip, if any, is left for the caller (the target section's "type").
func (d *decoder) structure(n *yaml.Node, path string, v reflect.Value, skip string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping of fields (key: value), got %s", describe(n))
		return
	}
	fields := fieldsOf(v.Type())
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		if key == skip {
			return
		}
		p := joinPath(path, key)
		f, ok := fields.byName[key]
		if !ok && d.full() {
			d.fail(k.Line, p, "unknown field") // only counted: no suggestion needed
			return
		}
		if !ok {
			names := fields.names
			if skip != "" {
				names = append([]string{skip}, names...)
			}
			d.fail(k.Line, p, "%s", unknownFieldMsg(v.Type(), key, names))
			return
		}
		d.value(val, k.Line, p, v.FieldByIndex(f))
	})
}

// sequence decodes a list into slice v, replacing its contents.
func (d *decoder) sequence(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, path, "expected a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		it := resolve(item)
		if it == nil || isNull(it) {
			d.fail(item.Line, p, "empty list item; give it a value or remove it")
			continue
		}
		d.value(it, it.Line, p, s.Index(i))
	}
	v.Set(s)
}

// mapping decodes a mapping into map v (string keys), adding to it.
func (d *decoder) mapping(n *yaml.Node, path string, v reflect.Value) {
	if v.Type().Key().Kind() != reflect.String {
		d.fail(n.Line, path, "cannot decode into Go type %s; this is a bug in Headroom", v.Type())
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping (key: value), got %s", describe(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		p := joinPath(path, key)
		if r := resolve(val); r == nil || isNull(r) {
			d.fail(k.Line, p, "has no value; give it one or remove the key")
			return
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.value(val, k.Line, p, elem)
		v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	})
}

// pairs calls fn for each key of mapping n, reporting keys that are not
// plain names, merge keys and duplicates instead of passing them on.
func (d *decoder) pairs(n *yaml.Node, path string, fn func(key string, k, val *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.fail(n.Content[i].Line, path, "keys must be plain names, got %s; rewrite the key as a name", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.fail(k.Line, path, "merge keys (<<) are not supported; write the fields out in full")
			continue
		}
		key := k.Value
		if first, dup := seen[key]; dup {
			d.fail(k.Line, joinPath(path, key), "duplicate key (first written on line %d); keep only one", first)
			continue
		}
		seen[key] = k.Line
		fn(key, k, n.Content[i+1])
	}
}

// structFields is the key -> field index table of a struct type.
type structFields struct {
	byName map[string][]int
	names  []string // in declaration order, for suggestions
}

func fieldsOf(t reflect.Type) structFields {
	fs := structFields{byName: map[string][]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs.byName[name] = f.Index
		fs.names = append(fs.names, name)
	}
	return fs
}

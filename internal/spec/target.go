package spec

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/headroom-dev/headroom/internal/deploy"
	"github.com/headroom-dev/headroom/internal/target/registry"
)

// target decodes the target section: "type" picks a registered target type
// and every other key is decoded strictly into that type's options.
func (d *decoder) target(n *yaml.Node, path string, t *Target) {
	t.Line = d.lines[path]
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "expected a mapping like {type: %s, ...}, got %s", exampleTargetType(), describe(n))
		return
	}
	var typeKey, typeVal *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == "type" {
			typeKey, typeVal = k, n.Content[i+1]
			break
		}
	}
	typePath := joinPath(path, "type")
	if tv := resolve(typeVal); tv != nil && tv.Kind == yaml.ScalarNode && tv.Style == 0 && tv.Value == "null" {
		// YAML reads a bare `null` as "no value", but here the user named
		// the null target; take the word as written.
		typeVal = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "null", Line: tv.Line, Column: tv.Column}
	}
	if typeKey == nil || resolve(typeVal) == nil || isNull(resolve(typeVal)) {
		d.fail(t.Line, typePath, "required; set it to one of: %s", strings.Join(registry.Names(), ", "))
		return
	}
	before := len(d.errs)
	d.value(typeVal, typeKey.Line, typePath, reflect.ValueOf(&t.Type).Elem())
	if len(d.errs) > before {
		return
	}
	f, ok := registry.Lookup(t.Type)
	if !ok {
		d.fail(typeKey.Line, typePath, "%s", unknownTargetMsg(t.Type))
		return
	}
	var opts any = &struct{}{}
	if f.NewOptions != nil {
		opts = f.NewOptions()
	}
	ov := reflect.ValueOf(opts)
	if !ov.IsValid() || ov.Kind() != reflect.Pointer || ov.IsNil() || ov.Elem().Kind() != reflect.Struct {
		d.fail(t.Line, path, "target type %q has options of type %T, not a pointer to a struct; this is a bug in Headroom", t.Type, opts)
		return
	}
	d.structure(n, path, ov.Elem(), "type")
	t.Options = opts
	if len(d.errs) > before {
		return
	}
	if m := registry.ManagedOf(opts); m != nil {
		if err := deploy.CheckCluster(m.Cluster, t.Type, f.ClusterModes); err != nil {
			d.targetInvalid(path, err)
			return
		}
		if m.Cluster != nil && m.Host != "" {
			d.targetInvalid(path, fmt.Errorf("managed.host: a cluster's nodes are placed by managed.cluster.hosts (a lab host name prefix); remove managed.host"))
			return
		}
	}
	if f.Validate == nil {
		return
	}
	if err := f.Validate(opts); err != nil {
		d.targetInvalid(path, err)
	}
}

// targetInvalid reports a target's Validate error. By the registry's
// convention the message starts with the option name ("journal_mode: ..."),
// which becomes part of the path so the error points at that option's line.
func (d *decoder) targetInvalid(path string, err error) {
	msg := oneLine(err.Error())
	p := path
	if field, rest, ok := strings.Cut(msg, ": "); ok && isOptionPath(field) {
		p, msg = path+"."+field, rest
	}
	add(&d.errs, &Error{File: d.file, Line: lineOf(d.lines, p), Path: p, Msg: msg})
}

func isOptionPath(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '.' || r == '[' || r == ']' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func unknownTargetMsg(name string) string {
	names := registry.Names()
	if len(names) == 0 {
		return fmt.Sprintf("unknown target type %q, and this build has no target types registered; use a full headroom build", name)
	}
	if s := closest(name, names); s != "" {
		return fmt.Sprintf("unknown target type %q; did you mean %q (known types: %s)?", name, s, strings.Join(names, ", "))
	}
	return fmt.Sprintf("unknown target type %q; use one of: %s", name, strings.Join(names, ", "))
}

// exampleTargetType is a registered type name for example snippets.
func exampleTargetType() string {
	if _, ok := registry.Lookup("sqlite"); ok {
		return "sqlite"
	}
	if names := registry.Names(); len(names) > 0 {
		return names[0]
	}
	return "sqlite"
}

// lineOf is the line of path, or of its nearest written ancestor, so that an
// error about a missing field points at the section that should hold it.
func lineOf(lines map[string]int, path string) int {
	for {
		if l, ok := lines[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			i = 0
		}
		path = path[:i]
	}
}

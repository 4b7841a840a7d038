package spec

import (
	"strconv"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what was found, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return strconv.Quote(truncate(n.Value, 40))
	}
	return "an unexpected YAML node"
}

func truncate(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "..."
}

// joinPath appends a key to a field path, quoting (and shortening) keys
// that are not short plain names so that the path stays readable and on
// one line.
func joinPath(path, key string) string {
	seg := key
	if !plainKey(key) || len(key) > 64 {
		seg = strconv.Quote(truncate(key, 40))
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}

func plainKey(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

package config

import (
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// applyYAML overlays a YAML document on cfg. It walks the document against
// the Config type so an unknown key becomes a warning (a typo must not be
// silently ignored, nor stop the server) and a bad value an error naming
// its key. Null values leave the default in place.
func applyYAML(cfg *Config, data []byte, source string) ([]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", source, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty or comment-only file
	}
	root := resolveAlias(doc.Content[0])
	if isNull(root) {
		return nil, nil
	}
	w := &yamlWalker{cfg: cfg, source: source}
	if err := w.section(root, reflect.TypeFor[Config](), ""); err != nil {
		return w.warnings, err
	}
	return w.warnings, nil
}

type yamlWalker struct {
	cfg      *Config
	source   string
	warnings []string
}

func (w *yamlWalker) section(n *yaml.Node, t reflect.Type, prefix string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: line %d: expected a mapping of settings", orRoot(prefix), n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, val := n.Content[i], resolveAlias(n.Content[i+1])
		path := keyNode.Value
		if prefix != "" {
			path = prefix + "." + keyNode.Value
		}
		f, ok := section(t, keyNode.Value)
		if !ok {
			w.warnings = append(w.warnings, fmt.Sprintf("%s: line %d: unknown key %q (ignored)%s",
				w.source, keyNode.Line, path, suggestion(path)))
			continue
		}
		if isNull(val) {
			continue
		}
		if isSection(f.Type) {
			if err := w.section(val, f.Type, path); err != nil {
				return err
			}
			continue
		}
		if err := w.leaf(val, path); err != nil {
			return err
		}
	}
	return nil
}

func (w *yamlWalker) leaf(n *yaml.Node, path string) error {
	k, ok := LookupKey(path)
	if !ok {
		return fmt.Errorf("%s: not a setting", path)
	}
	if k.typ == channelsType {
		doc, err := yaml.Marshal(n)
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", path, n.Line, err)
		}
		return setChannels(k.field(w.cfg), path, doc)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return k.SetString(w.cfg, n.Value)
	case yaml.SequenceNode:
		items := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			item = resolveAlias(item)
			if item.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: line %d: list items must be plain values", path, item.Line)
			}
			items = append(items, item.Value)
		}
		return k.SetList(w.cfg, items)
	default:
		return fmt.Errorf("%s: line %d: expected a %s, got a mapping", path, n.Line, k.Kind)
	}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for depth := 0; n.Kind == yaml.AliasNode && n.Alias != nil && depth < 16; depth++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func orRoot(prefix string) string {
	if prefix == "" {
		return "config"
	}
	return prefix
}

// suggestion names the closest known key or section when a typo is likely,
// so "scheduler.lookahed" points at "scheduler.lookahead".
func suggestion(path string) string {
	best, bestDist := "", 3
	seen := map[string]bool{}
	for _, k := range Keys() {
		parts := strings.Split(k.Path, ".")
		for i := range parts {
			candidate := strings.Join(parts[:i+1], ".")
			if seen[candidate] {
				continue
			}
			seen[candidate] = true
			if d := editDistance(path, candidate); d < bestDist {
				best, bestDist = candidate, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance, bounded by the short key paths.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

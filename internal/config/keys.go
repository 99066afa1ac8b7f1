package config

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"time"
)

// EnvPrefix starts every environment variable the server reads.
const EnvPrefix = "QHRONOS_"

// Key is one leaf setting of Config, derived from the struct's yaml tags.
type Key struct {
	// Path is the dotted YAML path, e.g. "scheduler.lookahead".
	Path string
	// Env is the environment variable, e.g. "QHRONOS_SCHEDULER_LOOKAHEAD".
	Env string
	// Kind names the accepted syntax: string, int, float, bool, duration,
	// list, cidr-list or object-list (YAML objects; JSON in the environment).
	Kind string

	index []int
	typ   reflect.Type
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	prefixType   = reflect.TypeFor[netip.Prefix]()
)

var keys = sync.OnceValue(func() []Key {
	return collectKeys(reflect.TypeFor[Config](), "", nil)
})

// Keys lists every leaf setting in struct order. It is computed once from
// the Config type, so YAML, environment and flags share one table; the
// caller gets its own copy.
func Keys() []Key {
	return append([]Key(nil), keys()...)
}

// EnvName maps a YAML path to its environment variable:
// "hmac.default_secret" → "QHRONOS_HMAC_DEFAULT_SECRET".
func EnvName(path string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// LookupKey finds the key for a dotted YAML path.
func LookupKey(path string) (Key, bool) {
	for _, k := range keys() {
		if k.Path == path {
			return k, true
		}
	}
	return Key{}, false
}

func collectKeys(t reflect.Type, prefix string, index []int) []Key {
	var keys []Key
	for i := range t.NumField() {
		f := t.Field(i)
		name := yamlName(f)
		if name == "" {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		idx := append(append([]int(nil), index...), i)
		if isSection(f.Type) {
			keys = append(keys, collectKeys(f.Type, path, idx)...)
			continue
		}
		keys = append(keys, Key{Path: path, Env: EnvName(path), Kind: kindOf(f.Type), index: idx, typ: f.Type})
	}
	return keys
}

// yamlName returns the field's yaml key, or "" when the field is not a
// setting (unexported or tagged "-").
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// isSection reports whether a field type is a nested group of settings
// rather than a value.
func isSection(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t != prefixType
}

// section returns the child field of a section type named by a yaml key.
func section(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func kindOf(t reflect.Type) string {
	switch {
	case t == durationType:
		return "duration"
	case t == channelsType:
		return "object-list"
	case t.Kind() == reflect.Slice && t.Elem() == prefixType:
		return "cidr-list"
	case t.Kind() == reflect.Slice:
		return "list"
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "float"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return "int"
	default:
		return "string"
	}
}

// field returns the addressable value of k inside cfg.
func (k Key) field(cfg *Config) reflect.Value {
	return reflect.ValueOf(cfg).Elem().FieldByIndex(k.index)
}

// Get returns the current value of k in cfg (for diagnostics and tests).
func (k Key) Get(cfg *Config) any {
	return k.field(cfg).Interface()
}

// SetString parses raw with the key's syntax (lists comma-separated) and
// stores it in cfg. The error names the key.
func (k Key) SetString(cfg *Config, raw string) error {
	if k.typ == channelsType {
		return setChannels(k.field(cfg), k.Path, []byte(raw))
	}
	if k.typ.Kind() == reflect.Slice {
		return k.SetList(cfg, splitList(raw))
	}
	v, err := parseValue(k.typ, raw)
	if err != nil {
		return fmt.Errorf("%s: %w", k.Path, err)
	}
	k.field(cfg).Set(v)
	return nil
}

// SetList stores a list value item by item; only list keys accept it.
func (k Key) SetList(cfg *Config, items []string) error {
	if k.typ.Kind() != reflect.Slice {
		return fmt.Errorf("%s: expected a single %s, got a list", k.Path, k.Kind)
	}
	if len(items) == 0 {
		// An empty list means "none", the same as the unset default (nil).
		k.field(cfg).Set(reflect.Zero(k.typ))
		return nil
	}
	out := reflect.MakeSlice(k.typ, 0, len(items))
	for _, item := range items {
		v, err := parseValue(k.typ.Elem(), item)
		if err != nil {
			return fmt.Errorf("%s: %w", k.Path, err)
		}
		out = reflect.Append(out, v)
	}
	k.field(cfg).Set(out)
	return nil
}

// splitList splits a comma-separated value, trimming blanks and dropping
// empty items so "a, b," is [a b].
func splitList(raw string) []string {
	var items []string
	for item := range strings.SplitSeq(raw, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

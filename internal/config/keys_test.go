package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleFor returns an environment value of k's syntax that differs from
// the default, so setting it proves the variable reaches the field.
func sampleFor(t *testing.T, k Key) string {
	t.Helper()
	switch k.Kind {
	case "duration":
		return "777s"
	case "int":
		return "777"
	case "float":
		return "7.5"
	case "bool":
		if k.Get(Default()).(bool) {
			return "false"
		}
		return "true"
	case "list":
		return "x.example:1,y.example:2"
	case "cidr-list":
		return "10.9.0.0/16"
	case "object-list":
		return `[{"name": "ops", "type": "webhook", "url": "https://ops.example/hook"}]`
	case "string":
		return "sample-" + k.Path
	}
	t.Fatalf("%s: no sample for kind %q", k.Path, k.Kind)
	return ""
}

func TestEveryKeyHasAWorkingEnvironmentVariable(t *testing.T) {
	t.Parallel()
	keys := Keys()
	require.Greater(t, len(keys), 60, "the key table looks truncated")
	seen := map[string]string{}
	for _, k := range keys {
		if got, want := k.Env, "QHRONOS_"+strings.ToUpper(strings.ReplaceAll(k.Path, ".", "_")); got != want {
			t.Errorf("%s: env got %q, want %q", k.Path, got, want)
		}
		if other, dup := seen[k.Env]; dup {
			t.Errorf("%s and %s both map to %s", k.Path, other, k.Env)
		}
		seen[k.Env] = k.Path

		cfg, _, err := Load(nil, envOf(map[string]string{k.Env: sampleFor(t, k)}))
		require.NoError(t, err, k.Env)
		if reflect.DeepEqual(k.Get(cfg), k.Get(Default())) {
			t.Errorf("%s=%s did not change %s", k.Env, sampleFor(t, k), k.Path)
		}
	}
}

func TestKeysCoverEveryStructLeaf(t *testing.T) {
	t.Parallel()
	// Count leaves independently of collectKeys: every exported field of a
	// section struct that is not itself a section, except the internal
	// tunables (tagged yaml:"-"), which have defaults but are not settings.
	var count func(reflect.Type) int
	count = func(t reflect.Type) int {
		n := 0
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("yaml") == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == reflect.TypeFor[Config]().PkgPath() {
				n += count(f.Type)
				continue
			}
			n++
		}
		return n
	}
	if got, want := len(Keys()), count(reflect.TypeFor[Config]()); got != want {
		t.Errorf("Keys(): got %d leaves, want %d", got, want)
	}
}

func TestLookupKey(t *testing.T) {
	t.Parallel()
	k, ok := LookupKey("redis.sentinel.master")
	require.True(t, ok)
	if got, want := k.Env, "QHRONOS_REDIS_SENTINEL_MASTER"; got != want {
		t.Errorf("env: got %q, want %q", got, want)
	}
	if _, ok := LookupKey("redis.sentinel"); ok {
		t.Errorf("a section is not a key")
	}
}

package config

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
)

// ConfigEnv names the config file when no --config flag is given.
const ConfigEnv = "QHRONOS_CONFIG"

// flagKeys are the command-line shortcuts for the settings people change
// most; everything else goes through the file or the environment.
var flagKeys = []struct{ name, path, usage string }{
	{"addr", "server.addr", "listen address host:port"},
	{"data-dir", "server.data_dir", "embedded data directory (SQLite, lock, generated secrets)"},
	{"database-url", "database.url", "postgres:// URL; selects PostgreSQL (production mode)"},
	{"redis-url", "redis.url", "redis:// URL for cross-instance coordination"},
	{"log-level", "log.level", "debug, info, warn or error"},
	{"log-format", "log.format", "console or json"},
}

// Load builds the configuration from, in increasing precedence: Default(),
// the YAML file named by --config or QHRONOS_CONFIG (only when named), the
// QHRONOS_* environment (an empty variable counts as unset), and the
// command-line flags. args are the arguments after the program name and
// subcommand; getenv is usually os.Getenv (nil means os.Getenv).
//
// Warnings (unknown YAML keys) are returned for the caller to log; errors
// name the offending key. Load does not call Validate, so commands such as
// `version` work with an incomplete configuration. -h/--help returns an
// error wrapping flag.ErrHelp; Usage() describes the flags.
func Load(args []string, getenv func(string) string) (*Config, []string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	configPath, flagValues, err := parseFlags(args)
	if err != nil {
		return nil, nil, err
	}
	cfg := Default()

	var warnings []string
	if configPath == "" {
		configPath = getenv(ConfigEnv)
	}
	if configPath != "" {
		data, err := os.ReadFile(configPath)
		if err != nil {
			return nil, nil, fmt.Errorf("read config file: %w", err)
		}
		if warnings, err = applyYAML(cfg, data, configPath); err != nil {
			return nil, warnings, err
		}
	}

	for _, k := range Keys() {
		if v := getenv(k.Env); v != "" {
			if err := k.SetString(cfg, v); err != nil {
				return nil, warnings, fmt.Errorf("environment %s: %w", k.Env, err)
			}
		}
	}

	for _, fv := range flagValues {
		k, _ := LookupKey(fv.path)
		if err := k.SetString(cfg, fv.value); err != nil {
			return nil, warnings, fmt.Errorf("flag --%s: %w", fv.name, err)
		}
	}

	if cfg.Log.Format == "" {
		cfg.Log.Format = "console"
		if cfg.Production() {
			cfg.Log.Format = "json"
		}
	}
	return cfg, warnings, nil
}

type flagValue struct{ name, path, value string }

// parseFlags returns the --config value and the other flags in the order
// given (the last of a repeated flag wins when applied).
func parseFlags(args []string) (string, []flagValue, error) {
	fs, configPath, values := newFlagSet()
	if err := fs.Parse(args); err != nil {
		// flag.ErrHelp stays matchable with errors.Is for the caller.
		return "", nil, fmt.Errorf("parse flags: %w", err)
	}
	if fs.NArg() > 0 {
		return "", nil, fmt.Errorf("parse flags: unexpected argument %q", fs.Arg(0))
	}
	return *configPath, *values, nil
}

func newFlagSet() (*flag.FlagSet, *string, *[]flagValue) {
	fs := flag.NewFlagSet("qhronosd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "YAML config file (also "+ConfigEnv+")")
	values := new([]flagValue)
	for _, f := range flagKeys {
		k, ok := LookupKey(f.path)
		if !ok {
			panic("config: flag for unknown key " + f.path) // programming error, caught by tests
		}
		fs.Func(f.name, f.usage+" ("+k.Path+", "+k.Env+")", func(v string) error {
			*values = append(*values, flagValue{name: f.name, path: f.path, value: v})
			return nil
		})
	}
	return fs, configPath, values
}

// Usage describes the command-line flags and where the other settings come
// from, for the binary's --help output.
func Usage() string {
	var b bytes.Buffer
	fs, _, _ := newFlagSet()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	b.WriteString("\nEvery setting in config.yaml can also be set as " + EnvPrefix +
		"<PATH> (upper case, dots as underscores),\ne.g. QHRONOS_SCHEDULER_LOOKAHEAD=48h; lists are comma-separated.\n" +
		"Precedence: defaults < config file < environment < flags.\n")
	return b.String()
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newTopicsCmd(a *app) *cobra.Command {
	cmd := group("topics", "Manage the topic catalogue: the names of what can fire, with an optional JSON Schema",
		newTopicsCreateCmd(a), newTopicsListCmd(a), newTopicsGetCmd(a), newTopicsUpdateCmd(a), newTopicsDeleteCmd(a))
	cmd.Aliases = []string{"topic"}
	cmd.Long = `Topics are the catalogue of what can fire: a name of dot-separated segments of a-z 0-9 _ -
(such as digest.daily), a description, and optionally a JSON Schema the metadata of the events
targeting the topic must follow. Every token reads the catalogue; only admins create, change and
delete topics. A topic cannot be deleted while a subscription names it exactly (patterns such as
digest.* do not hold it). See "qhronos subscriptions" for who receives a topic's firings.`
	cmd.Example = `  qhronos topics create digest.daily --description "the daily digest" --schema digest.schema.json
  qhronos topics list
  qhronos topics update digest.daily --no-schema
  qhronos subscriptions create --topic digest.daily --endpoint 5c9d…`
	return cmd
}

// topicFlags are a topic's members as flags; update sends only the flags
// given.
type topicFlags struct {
	description, schema string
	noSchema            bool
}

func (f *topicFlags) register(cmd *cobra.Command, creating bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.description, "description", "", "what the topic is (at most 1000 characters)")
	fs.StringVar(&f.schema, "schema", "", "a JSON Schema file (- for stdin) the metadata of the events targeting the topic must follow")
	if !creating {
		fs.BoolVar(&f.noSchema, "no-schema", false, "remove the schema: any metadata goes")
	}
}

// readSchema reads --schema: a JSON document, sent as it is.
func (f *topicFlags) readSchema(a *app) (json.RawMessage, error) {
	b, err := readInput(f.schema, a.stdin)
	if err != nil {
		return nil, usagef("--schema: %v", err)
	}
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return nil, usagef("--schema: %s is not JSON", schemaSource(f.schema))
	}
	return json.RawMessage(b), nil
}

func schemaSource(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}

// request builds a create's body from the flags.
func (f *topicFlags) request(cmd *cobra.Command, a *app, name string) (client.TopicRequest, error) {
	in := client.TopicRequest{Name: &name}
	if cmd.Flags().Changed("description") {
		in.Description = &f.description
	}
	if cmd.Flags().Changed("schema") {
		schema, err := f.readSchema(a)
		if err != nil {
			return in, err
		}
		in.Schema = (*json.RawMessage)(&schema)
	}
	return in, nil
}

// patch builds an update's members from the flags that were set;
// --no-schema sends "schema": null.
func (f *topicFlags) patch(cmd *cobra.Command, a *app) (map[string]any, error) {
	set := cmd.Flags().Changed
	if f.noSchema && set("schema") {
		return nil, usagef("--no-schema: not with --schema")
	}
	out := map[string]any{}
	if set("description") {
		out["description"] = f.description
	}
	if set("schema") {
		schema, err := f.readSchema(a)
		if err != nil {
			return nil, err
		}
		out["schema"] = schema
	}
	if f.noSchema {
		out["schema"] = nil
	}
	if len(out) == 0 {
		return nil, usagef("nothing to change: give --description, --schema or --no-schema")
	}
	return out, nil
}

// hasSchema says whether a topic has a schema; the API shows none as null.
func hasSchema(t *client.Topic) bool {
	return t.Schema != nil && len(*t.Schema) > 0 && string(*t.Schema) != "null"
}

// schemaSummary is a topic's schema on one line, cut short; "none" when it
// has none.
func schemaSummary(t *client.Topic) string {
	if !hasSchema(t) {
		return "none"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, *t.Schema); err != nil {
		return "yes"
	}
	const width = 60
	if utf8.RuneCount(b.Bytes()) <= width {
		return b.String()
	}
	return truncate(b.String(), width) + " (-o json shows it all)"
}

// truncate cuts s to at most n characters, whitespace runs made one space,
// ending in … when cut.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) topicTable(t *client.Topic) *table {
	z := a.localZone()
	tb := fields("name", t.Name, "description", orDash(t.Description), "schema", schemaSummary(t),
		"version", fmt.Sprint(t.Version), "created", z.when(&t.CreatedAt), "created by", t.CreatedBy,
		"updated", z.when(&t.UpdatedAt))
	tb.zone = z
	return tb
}

func newTopicsCreateCmd(a *app) *cobra.Command {
	var f topicFlags
	cmd := &cobra.Command{
		Use:   "create NAME [--description D] [--schema FILE|-]",
		Short: "Add a topic to the catalogue (admin)",
		Example: `  qhronos topics create digest.daily --description "the daily digest"
  qhronos topics create billing.invoice-paid --schema invoice.schema.json
  echo '{"type":"object","required":["customer"]}' | qhronos topics create billing.dunning --schema -`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.request(cmd, a, args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.Topics.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(t, a.topicTable(t))
		},
	}
	f.register(cmd, true)
	return cmd
}

func newTopicsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the topic catalogue, in name order",
		Example: `  qhronos topics list
  qhronos topics list --output json | jq -r '.[].name'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			topics := []client.Topic{}
			for t, err := range c.Topics.All(cmd.Context(), client.ListTopicsParams{}) {
				if err != nil {
					return err
				}
				topics = append(topics, t)
			}
			z := a.localZone()
			tb := &table{header: []string{"NAME", "DESCRIPTION", "SCHEMA", "UPDATED"}, zone: z}
			for i := range topics {
				t := &topics[i]
				tb.add(t.Name, orDash(truncate(t.Description, 50)), flag(client.Ptr(hasSchema(t))), z.when(&t.UpdatedAt))
			}
			return a.render(topics, tb)
		},
	}
}

func newTopicsGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show one topic; -o json shows its whole schema",
		Example: `  qhronos topics get digest.daily
  qhronos topics get digest.daily -o json | jq .schema > digest.schema.json`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.Topics.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.render(t, a.topicTable(t))
		},
	}
}

func newTopicsUpdateCmd(a *app) *cobra.Command {
	var f topicFlags
	cmd := &cobra.Command{
		Use:   "update NAME [--description D] [--schema FILE|- | --no-schema]",
		Short: "Change a topic's description or schema (admin): only the flags given change; its name cannot",
		Example: `  qhronos topics update digest.daily --description "the digest, sent at 07:00"
  qhronos topics update digest.daily --schema digest.schema.json
  qhronos topics update digest.daily --no-schema`,
		Args: exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := f.patch(cmd, a)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.Topics.UpdateFields(cmd.Context(), args[0], body)
			if err != nil {
				return err
			}
			return a.render(t, a.topicTable(t))
		},
	}
	f.register(cmd, false)
	return cmd
}

func newTopicsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Short:   "Delete a topic no subscription names exactly (admin)",
		Example: `  qhronos topics delete digest.daily`,
		Args:    exactArgs("NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Topics.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": args[0]}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
}

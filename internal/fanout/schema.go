package fanout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/qhronos/qhronos/internal/input"
)

// MaxSchemaBytes bounds a topic's schema.
const MaxSchemaBytes = 64 << 10

// schemaURL is where a topic's schema is filed for the compiler; it is never
// fetched.
const schemaURL = "qhronos:topic-schema.json"

// Schema is a topic's compiled JSON Schema: what the metadata of the events
// that target it must follow.
type Schema struct {
	sch *jsonschema.Schema
}

// CompileSchema compiles a topic's schema (JSON Schema, draft 2020-12 unless
// it names another in $schema). It refers to nothing outside itself: a $ref
// to another document is refused rather than fetched. Refusals are 400s
// naming field.
func CompileSchema(field string, raw json.RawMessage) (*Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, input.BadRequestf(field, "must be at most %d bytes", MaxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, input.BadRequest(field, "must be a JSON Schema document: "+err.Error())
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, input.BadRequest(field, "must be a JSON Schema: an object (or true/false)")
		}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file, no network
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, input.BadRequest(field, "is not a valid JSON Schema: "+oneLine(err.Error()))
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, input.BadRequest(field, "is not a valid JSON Schema: "+oneLine(schemaMessage(err)))
	}
	return &Schema{sch: sch}, nil
}

// Validate checks a document (an event's metadata) against the schema; the
// refusal is a 400 naming field and the first place that breaks it.
func (s *Schema) Validate(field string, doc json.RawMessage) error {
	if len(doc) == 0 {
		doc = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return input.BadRequest(field, "must be JSON: "+err.Error())
	}
	err = s.sch.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	where, why := firstFailure(ve.BasicOutput())
	if where != "" {
		return input.BadRequestf(field, "does not follow the topic's schema at %s: %s", where, why)
	}
	return input.BadRequestf(field, "does not follow the topic's schema: %s", why)
}

// firstFailure is the deepest first error of a basic output: its instance
// location (a JSON pointer) and message.
func firstFailure(out *jsonschema.OutputUnit) (where, why string) {
	why = "invalid"
	for _, u := range out.Errors {
		if u.Error != nil {
			where, why = u.InstanceLocation, u.Error.String()
		}
	}
	if out.Error != nil && why == "invalid" {
		where, why = out.InstanceLocation, out.Error.String()
	}
	return where, why
}

// schemaMessage says what is wrong with a schema: where it breaks the
// metaschema, or that it refers to another document (never fetched).
func schemaMessage(err error) string {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		where, why := firstFailure(ve.BasicOutput())
		if where == "" {
			return why
		}
		return "at " + where + ": " + why
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return fmt.Sprintf("it refers to %s, and a topic's schema must hold everything itself", le.URL)
	}
	return strings.ReplaceAll(fmt.Sprint(err), schemaURL, "the schema")
}

package fanout

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/input"
)

func firing() Firing {
	var meta any
	_ = json.Unmarshal([]byte(`{"region":"eu","plan":"pro","seats":12,"items":[{"sku":"a"},{"sku":"b"}]}`), &meta)
	return Firing{Topic: "digest.daily", Name: "morning digest", Tags: []string{"customer-42"}, Metadata: meta,
		ScheduledAt: time.Date(2031, 3, 4, 9, 0, 0, 0, time.UTC),
		Payload:     map[string]any{"event_id": "e1", "metadata": meta}}
}

func TestFiltersChooseFirings(t *testing.T) {
	for expr, want := range map[string]bool{
		`metadata.region == "eu"`:                              true,
		`metadata.region == "us"`:                              false,
		`metadata.seats > 10`:                                  true, // a JSON number against an int
		`"customer-42" in tags && topic.startsWith("digest.")`: true,
		`metadata.items.exists(i, i.sku == "b")`:               true,
		`payload.metadata.plan == "pro"`:                       true,
		`scheduled_at.getHours() == 9`:                         true,
		`has(metadata.trial) && metadata.trial`:                false,
	} {
		f, err := CompileFilter("filter", expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got, err := f.Match(firing())
		if err != nil || got != want {
			t.Errorf("%s = %v, %v; want %v", expr, got, err, want)
		}
	}
	// A filter that cannot decide on this firing says why.
	f, err := CompileFilter("filter", `metadata.missing == "x"`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Match(firing()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing key: %v", err)
	}
}

func TestFiltersThatCannotBeUsedAreRefusedNamingTheField(t *testing.T) {
	for expr, says := range map[string]string{
		``:                        "must be a CEL expression",
		`metadata.region ==`:      "does not compile",
		`region == "eu"`:          "undeclared reference",
		`metadata.region + 1`:     "", // dyn: may be a bool at run time? no: refused at run, compiles
		`"eu"`:                    "must be true or false",
		`tags.size()`:             "must be true or false",
		strings.Repeat("a", 5000): "at most 4096",
		`metadata.items.all(a, metadata.items.all(b, a == b))`: "more than the limit",
	} {
		_, err := CompileFilter("filter", expr)
		if says == "" {
			continue
		}
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "filter" || !strings.Contains(ie.Message, says) {
			t.Errorf("%.40s: got %v, want a 400 naming filter saying %q", expr, err, says)
		}
	}
}

func TestSchemasCompileAndCheckMetadata(t *testing.T) {
	s, err := CompileSchema("schema", json.RawMessage(`{"type":"object","required":["region"],
		"properties":{"region":{"enum":["eu","us"]},"seats":{"type":"integer","minimum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate("metadata", json.RawMessage(`{"region":"eu","seats":3}`)); err != nil {
		t.Errorf("valid metadata refused: %v", err)
	}
	for doc, says := range map[string]string{
		`{"seats":3}`:               "missing property 'region'",
		`{"region":"asia"}`:         "/region",
		`{"region":"eu","seats":0}`: "/seats",
		`null`:                      "want object",
	} {
		err := s.Validate("metadata", json.RawMessage(doc))
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "metadata" || !strings.Contains(ie.Message, says) {
			t.Errorf("%s: got %v, want a 400 naming metadata saying %q", doc, err, says)
		}
	}
	for raw, says := range map[string]string{
		`{"type":"objekt"}`:                     "not a valid JSON Schema",
		`[1]`:                                   "an object",
		`{"$ref":"https://example.com/s.json"}`: "not a valid JSON Schema",
		`{"type":`:                              "must be a JSON Schema document",
	} {
		_, err := CompileSchema("schema", json.RawMessage(raw))
		var ie *input.Error
		if !errors.As(err, &ie) || ie.Field != "schema" || !strings.Contains(ie.Message, says) {
			t.Errorf("%s: got %v, want a 400 naming schema saying %q", raw, err, says)
		}
	}
}

func FuzzCompileFilter(f *testing.F) {
	f.Add(`metadata.region == "eu"`)
	f.Add(`tags.exists(t, t.startsWith("customer-"))`)
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := CompileFilter("filter", expr)
		if err != nil {
			var ie *input.Error
			if !errors.As(err, &ie) || ie.Field != "filter" {
				t.Fatalf("%q: a refusal that names no field: %v", expr, err)
			}
			return
		}
		_, _ = flt.Match(firing()) // must not panic or run away
	})
}

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
)

// readObject reads the body as one JSON object and returns its members; a
// non-object, trailing data or an oversized body is a 4xx.
func readObject(c *gin.Context) (map[string]json.RawMessage, []byte, error) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			return nil, nil, err
		}
		return nil, nil, badRequest("body", "could not be read")
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, nil, badRequest("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return nil, nil, badRequest("body", "invalid JSON: "+jsonReason(err))
	}
	if dec.More() {
		return nil, nil, badRequest("body", "unexpected data after the JSON object")
	}
	if err := badText(members); err != nil {
		return nil, nil, err
	}
	return members, body, nil
}

// rejectUnknown answers 400 naming the first unknown members; ignored members
// (read-only fields a client may send back) are dropped.
func rejectUnknown(members map[string]json.RawMessage, known, ignored map[string]bool) error {
	var unknown []string
	for k := range members {
		switch {
		case known[k]:
		case ignored[k]:
			delete(members, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return badRequestf(unknown[0], "unknown field (unknown: %s)", strings.Join(unknown, ", "))
}

// decodeField decodes one member into v, naming the field on failure.
func decodeField(members map[string]json.RawMessage, name string, v any) (present bool, err error) {
	raw, ok := members[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, badRequest(name, jsonReason(err))
	}
	return true, nil
}

// decodeStrict decodes raw into v, refusing unknown members, naming field.
func decodeStrict(raw json.RawMessage, field string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest(field, jsonReason(err))
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonReason turns a decoding error into a short reason without Go types.
func jsonReason(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		want := typeErr.Type.Kind().String()
		switch want {
		case "slice":
			want = "an array"
		case "map", "struct", "ptr":
			want = "an object"
		case "int", "int64", "int32", "float64":
			want = "a number"
		case "string":
			want = "a string"
		case "bool":
			want = "a boolean"
		}
		if typeErr.Field != "" {
			return fmt.Sprintf("%s: must be %s, not %s", typeErr.Field, want, typeErr.Value)
		}
		return fmt.Sprintf("must be %s, not %s", want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at offset %d", syntaxErr.Offset)
	default:
		msg := strings.TrimPrefix(err.Error(), "json: ")
		return msg
	}
}

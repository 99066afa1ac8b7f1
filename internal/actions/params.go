package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// decodeParams decodes an action's params object strictly: unknown params are
// refused by name so a typo ("ulr") is reported instead of silently ignored.
func decodeParams(params json.RawMessage, into any) error {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return &ParamError{Param: "params", Reason: "must be a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return &ParamError{Param: typeErr.Field, Reason: "must be a JSON " + jsonKind(typeErr.Type.Kind().String())}
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return &ParamError{Param: name, Reason: "unknown param"}
		default:
			return &ParamError{Param: "params", Reason: "invalid JSON object"}
		}
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "map", "struct":
		return "object"
	case "slice", "array":
		return "array"
	default:
		return "number"
	}
}

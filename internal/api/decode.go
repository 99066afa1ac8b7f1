package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/qhronos/qhronos/internal/input"
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
		return nil, nil, input.BadRequest("body", "could not be read")
	}
	body = bytes.TrimSpace(body)
	members, err := decodeObject(body)
	return members, body, err
}

// decodeObject decodes one JSON object (a request body, or an event of a
// batch) into its members; anything else, or unstorable text, is a 400.
func decodeObject(body []byte) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, input.BadRequest("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return nil, input.BadRequest("body", "invalid JSON: "+input.JSONReason(err))
	}
	if dec.More() {
		return nil, input.BadRequest("body", "unexpected data after the JSON object")
	}
	if err := badText(members); err != nil {
		return nil, err
	}
	return members, nil
}

// readOptionalObject reads a body that may be empty (nil) or one JSON
// object (its bytes).
func readOptionalObject(c *gin.Context) ([]byte, error) {
	if c.Request.ContentLength == 0 {
		return nil, nil
	}
	_, body, err := readObject(c)
	if err != nil {
		var in *input.Error
		if errors.As(err, &in) && in.Message == "must be a JSON object" && len(body) == 0 {
			return nil, nil // chunked but empty
		}
	}
	return body, err
}

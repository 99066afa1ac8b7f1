package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// RestoreError refuses a fingerprint sent where it stands for no stored
// value, or for one whose destination changed in the same request.
type RestoreError struct {
	Field string
	Moved bool // the destination changed: the secret must be given again
}

func (e *RestoreError) Error() string { return e.Field + ": " + e.Reason() }

// Reason is the message without the field.
func (e *RestoreError) Reason() string {
	if e.Moved {
		return "must be given again: the URL it is sent to changed, and a stored secret is never sent to a new " +
			"destination"
	}
	return "is a fingerprint (" + Mask + "…) that stands for no stored value here; send the value itself"
}

// Restore puts back the stored values behind the fingerprints of sent, a
// document that replaces stored (an event's action params, an endpoint's
// url and headers): a fingerprint stands for the stored value shown as
// that same fingerprint at the same place. A top-level "url" is restored
// first; when it then differs from the stored one the destination changed
// and every other fingerprint is refused. field prefixes error fields.
func (r *Redactor) Restore(field string, sent, stored json.RawMessage) (json.RawMessage, error) {
	if !strings.Contains(string(sent), Mask) {
		return sent, nil
	}
	s, ok := DecodeDocument(sent)
	if !ok {
		return sent, nil
	}
	st, _ := DecodeDocument(stored)
	out, err := r.restoreDoc(field, s, st)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode restored document: %w", err)
	}
	return b, nil
}

// RestoreValue is Restore for a decoded document.
func (r *Redactor) RestoreValue(field string, sent, stored any) (any, error) {
	return r.restoreDoc(field, sent, stored)
}

func (r *Redactor) restoreDoc(field string, sent, stored any) (any, error) {
	shown := r.Document(stored)
	sm, sOK := sent.(map[string]any)
	stm, stOK := stored.(map[string]any)
	moved := false
	if sOK && stOK {
		if u, has := sm["url"]; has {
			restored, err := restore(join(field, "url"), u, stm["url"], shown.(map[string]any)["url"], false)
			if err != nil {
				return nil, err
			}
			sm = copyMap(sm)
			sm["url"] = restored
			moved = !reflect.DeepEqual(restored, stm["url"])
			sent = sm
		}
	}
	return restore(field, sent, stored, shown, moved)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// restore walks sent beside stored and shown (stored as answers show it).
func restore(path string, sent, stored, shown any, moved bool) (any, error) {
	switch s := sent.(type) {
	case string:
		if !strings.Contains(s, Mask) {
			return s, nil
		}
		if sh, ok := shown.(string); ok && sh == s && !reflect.DeepEqual(shown, stored) {
			if moved {
				return nil, &RestoreError{Field: path, Moved: true}
			}
			return stored, nil
		}
		return nil, &RestoreError{Field: path}
	case map[string]any:
		stm, _ := stored.(map[string]any)
		shm, _ := shown.(map[string]any)
		out := make(map[string]any, len(s))
		for _, k := range sortedKeys(s) {
			v, err := restore(join(path, k), s[k], stm[k], shm[k], moved)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case []any:
		sta, _ := stored.([]any)
		sha, _ := shown.([]any)
		out := make([]any, len(s))
		for i, v := range s {
			var st, sh any
			if i < len(sta) && i < len(sha) {
				st, sh = sta[i], sha[i]
			}
			got, err := restore(fmt.Sprintf("%s[%d]", path, i), v, st, sh, moved)
			if err != nil {
				return nil, err
			}
			out[i] = got
		}
		return out, nil
	default:
		return sent, nil
	}
}

package console

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
)

// The API reference is /openapi.json rendered on the server: every path and
// operation with its parameters, request body and answers. Server-side
// rendering keeps the strict CSP (no inline styles or scripts a bundled
// renderer would need) and the page fast.

type apiParam struct {
	Name, In, Type, Description string
	Required                    bool
}

type apiOperation struct {
	Method, Path, Summary, Description, Anchor string
	Params                                     []apiParam
	Body                                       string
	Responses                                  []apiParam // Name = code
}

type apiRefData struct {
	Title, Version, Description string
	Operations                  []apiOperation
	Schemas                     []apiParam // Name, Description = JSON
}

func schemaName(v any) string {
	m, _ := v.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		return strings.TrimPrefix(ref, "#/components/schemas/")
	}
	if t, ok := m["type"].(string); ok {
		if t == "array" {
			return "array of " + schemaName(m["items"])
		}
		return t
	}
	if len(m) > 0 {
		return "object"
	}
	return ""
}

func contentSchema(v any) string {
	m, _ := v.(map[string]any)
	content, _ := m["content"].(map[string]any)
	names := make([]string, 0, len(content))
	for ct, c := range content {
		cm, _ := c.(map[string]any)
		names = append(names, schemaName(cm["schema"])+" ("+ct+")")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (c *Console) apiReference(w http.ResponseWriter, r *http.Request, s *session) {
	var doc map[string]any
	raw, err := c.sdk(r).OpenAPI(r.Context())
	if err = sdkError(err); err == nil {
		err = json.Unmarshal(raw, &doc)
	}
	if err != nil {
		c.fail(w, r, s, err)
		return
	}
	var d apiRefData
	if info, ok := doc["info"].(map[string]any); ok {
		d.Title, _ = info["title"].(string)
		d.Version, _ = info["version"].(string)
		d.Description, _ = info["description"].(string)
	}
	paths, _ := doc["paths"].(map[string]any)
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		ops, _ := paths[p].(map[string]any)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := ops[method].(map[string]any)
			if !ok {
				continue
			}
			o := apiOperation{Method: strings.ToUpper(method), Path: p,
				Anchor: method + strings.NewReplacer("/", "-", "{", "", "}", "").Replace(p)}
			o.Summary, _ = op["summary"].(string)
			o.Description, _ = op["description"].(string)
			params, _ := op["parameters"].([]any)
			if shared, ok := ops["parameters"].([]any); ok {
				params = append(shared, params...)
			}
			for _, pv := range params {
				pm, _ := pv.(map[string]any)
				ap := apiParam{Type: schemaName(pm["schema"])}
				ap.Name, _ = pm["name"].(string)
				ap.In, _ = pm["in"].(string)
				ap.Description, _ = pm["description"].(string)
				ap.Required, _ = pm["required"].(bool)
				o.Params = append(o.Params, ap)
			}
			if rb, ok := op["requestBody"]; ok {
				o.Body = contentSchema(rb)
			}
			responses, _ := op["responses"].(map[string]any)
			codes := make([]string, 0, len(responses))
			for code := range responses {
				codes = append(codes, code)
			}
			sort.Strings(codes)
			for _, code := range codes {
				rm, _ := responses[code].(map[string]any)
				ap := apiParam{Name: code}
				ap.Description, _ = rm["description"].(string)
				if ref, ok := rm["$ref"].(string); ok {
					ap.Description = strings.TrimPrefix(ref, "#/components/responses/")
				}
				ap.Type = contentSchema(rm)
				o.Responses = append(o.Responses, ap)
			}
			d.Operations = append(d.Operations, o)
		}
	}
	if comps, ok := doc["components"].(map[string]any); ok {
		schemas, _ := comps["schemas"].(map[string]any)
		names := make([]string, 0, len(schemas))
		for n := range schemas {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			b, _ := json.MarshalIndent(schemas[n], "", "  ")
			d.Schemas = append(d.Schemas, apiParam{Name: n, Description: string(b)})
		}
	}
	c.render(w, r, s, "apiref", http.StatusOK, view{Title: "API reference", Nav: "api", Data: d})
}

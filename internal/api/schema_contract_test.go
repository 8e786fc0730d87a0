package api

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The schema contract: for every operation of the published document, requests generated from
// the document (property-based, with rapid) and the server agree in both directions. A request
// the document accepts is never refused for its shape; a request breaking one of its rules is
// a 4xx envelope naming the field at fault.

// contractID fills every path id: no resource has it, so handlers that look one up answer 404
// after the shape of the request was checked.
const contractID = "2o0yqLDGdJdFRBTuhdfPNEZdAvY"

// shapeMessage is the wording of the answers that refuse a request for its shape (a schema
// rule, or a handler's own check of one): a request the document accepts never gets one.
var shapeMessage = regexp.MustCompile(`^[\w.\[\]]+: (expected \w+|must be at most \d+ characters|must be at least \d+ characters|` +
	`must be one of |is required( and must not be empty|: |$)|needs one of|must be an RFC 3339|must match |must hold at (least|most) \d+|is required without)`)

// contractOp is one operation of the document with what a request to it needs.
type contractOp struct {
	method, path, op string
	body             map[string]any // the JSON request body schema; nil when there is none
	params           []map[string]any
	userOnly         bool // only a bearer token may call it
}

// contractEnv is a server with an API key of every scope and a logged-in admin's token.
type contractEnv struct {
	e      *testEnv
	doc    map[string]any
	bearer string
}

func newContractEnv(t *testing.T) *contractEnv {
	e := newServerEnv(t)
	var doc map[string]any
	if err := json.Unmarshal(e.srv.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	u := newUser(t, e, "contract@example.com", "x", e.ws, "admin")
	return &contractEnv{e: e, doc: doc, bearer: token(t, u)}
}

// operations lists the document's operations, sorted by path and method.
func (c *contractEnv) operations() []contractOp {
	var ops []contractOp
	for path, item := range c.doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			op := raw.(map[string]any)
			co := contractOp{method: strings.ToUpper(method), path: path, op: op["operationId"].(string)}
			if rb, ok := op["requestBody"].(map[string]any); ok {
				if mt, ok := rb["content"].(map[string]any)["application/json"].(map[string]any); ok {
					co.body = mt["schema"].(map[string]any)
				}
			}
			for _, p := range asList(op["parameters"]) {
				co.params = append(co.params, p.(map[string]any))
			}
			co.userOnly = true
			for _, sec := range asList(op["security"]) {
				if _, key := sec.(map[string]any)["apiKey"]; key {
					co.userOnly = false
				}
			}
			if len(asList(op["security"])) == 0 {
				co.userOnly = false // public
			}
			ops = append(ops, co)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

func asList(v any) []any { l, _ := v.([]any); return l }

// resolve follows a $ref into the document's components.
func (c *contractEnv) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = c.doc["components"].(map[string]any)["schemas"].(map[string]any)[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
}

// site is a value the generator wrote into a body, with the schema it was written from: the
// places a rule can be broken.
type site struct {
	path   []any // keys (string) and indices (int) from the body's root
	schema map[string]any
}

// apiPath names a site as the API names fields: config.tools[0].name.
func (s site) apiPath() string {
	var b strings.Builder
	for _, p := range s.path {
		switch k := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", k)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
		}
	}
	return b.String()
}

// schemaType is the schema's JSON type, the first that is not null when it lists several.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if e != "null" {
				return e.(string)
			}
		}
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func num(s map[string]any, key string) (float64, bool) {
	f, ok := s[key].(float64)
	return f, ok
}

// gen draws a value the schema accepts, recording every site it writes.
func (c *contractEnv) gen(t *rapid.T, s map[string]any, path []any, sites *[]site, depth int) any {
	s = c.resolve(s)
	// A choice of schemas (an object's anyOf of required fields is genObject's): one of them.
	if alts := append(asList(s["oneOf"]), asList(s["anyOf"])...); len(alts) > 0 && schemaType(s) == "" {
		alts = slices.DeleteFunc(slices.Clone(alts), func(a any) bool { return a.(map[string]any)["type"] == "null" })
		return c.gen(t, rapid.SampledFrom(alts).Draw(t, "branch").(map[string]any), path, sites, depth)
	}
	if enum := asList(s["enum"]); len(enum) > 0 {
		if _, ok := num(s, "minLength"); ok { // an alternative's minLength on an enum with ""
			enum = slices.DeleteFunc(slices.Clone(enum), func(e any) bool { return e == "" })
		}
		v := rapid.SampledFrom(enum).Draw(t, "enum")
		*sites = append(*sites, site{path: path, schema: s})
		return v
	}
	var v any
	switch schemaType(s) {
	case "object":
		v = c.genObject(t, s, path, sites, depth)
	case "array":
		lo, _ := num(s, "minItems")
		hi := lo + 2
		if m, ok := num(s, "maxItems"); ok && m < hi {
			hi = m
		}
		n := rapid.IntRange(int(lo), int(hi)).Draw(t, "items")
		if depth > 3 {
			n = int(lo)
		}
		items := []any{}
		for i := range n {
			items = append(items, c.gen(t, s["items"].(map[string]any), append(slices.Clip(path), i), sites, depth+1))
		}
		v = items
	case "string":
		v = genString(t, s)
	case "integer", "number":
		lo, hasLo := num(s, "minimum")
		hi, hasHi := num(s, "maximum")
		if !hasLo {
			lo = 0
		}
		if !hasHi || hi > lo+100 {
			hi = lo + 100
		}
		v = float64(rapid.IntRange(int(lo), int(hi)).Draw(t, "number"))
	case "boolean":
		v = rapid.Bool().Draw(t, "bool")
	default:
		return map[string]any{"message": "hi"} // any JSON: an object fits every free-form field
	}
	*sites = append(*sites, site{path: path, schema: s})
	return v
}

// genObject draws an object: every required property, some optional ones, and for a map a
// few entries.
func (c *contractEnv) genObject(t *rapid.T, s map[string]any, path []any, sites *[]site, depth int) map[string]any {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asList(s["required"]) {
		required[r.(string)] = true
	}
	// An anyOf of required alternatives: honour one of them. The sites written for it keep
	// the property's own schema: breaking the alternative's rule may leave another one met.
	base := props
	if alts := asList(s["anyOf"]); len(alts) > 0 {
		alt := rapid.SampledFrom(alts).Draw(t, "anyOf").(map[string]any)
		props = c.withAlternative(props, alt)
		for _, r := range asList(alt["required"]) {
			required[r.(string)] = true
		}
	}
	obj := map[string]any{}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !required[name] && (depth > 2 || !rapid.Bool().Draw(t, "optional "+name)) {
			continue
		}
		obj[name] = c.gen(t, props[name].(map[string]any), append(slices.Clip(path), name), sites, depth+1)
		if last := len(*sites) - 1; last >= 0 && len((*sites)[last].path) == len(path)+1 && (*sites)[last].path[len(path)] == name {
			(*sites)[last].schema = c.resolve(base[name].(map[string]any))
		}
	}
	if extra, ok := s["additionalProperties"].(map[string]any); ok && len(props) == 0 && depth <= 2 {
		for i := range rapid.IntRange(0, 2).Draw(t, "entries") {
			key := "k" + strconv.Itoa(i)
			obj[key] = c.gen(t, extra, append(slices.Clip(path), key), sites, depth+1)
		}
	}
	return obj
}

// withAlternative is an object's properties with the constraints an anyOf alternative adds
// to some of them.
func (c *contractEnv) withAlternative(props, alt map[string]any) map[string]any {
	merged := map[string]any{}
	for k, p := range props {
		merged[k] = p
	}
	for k, p := range alt["properties"].(map[string]any) {
		merged[k] = flatten(c.resolve(merged[k].(map[string]any)), p.(map[string]any))
	}
	return merged
}

// flatten merges an anyOf branch's constraints on a property into its schema.
func flatten(base, extra map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// genString draws a string within the schema's length, enum and format; letters only, so a
// \S pattern holds whenever the length is at least 1.
func genString(t *rapid.T, s map[string]any) string {
	if s["format"] == "date-time" {
		return rapid.SampledFrom([]string{"2026-01-02T15:04:05Z", "2030-06-01T00:00:00.123Z", "2027-03-04T05:06:07+02:00"}).Draw(t, "time")
	}
	lo, _ := num(s, "minLength")
	hi := lo + 12
	if m, ok := num(s, "maxLength"); ok {
		if m < hi || (m <= 2000 && rapid.IntRange(0, 9).Draw(t, "at max") == 0) {
			hi = m // now and then exactly at the limit
			lo = m
		}
	}
	n := rapid.IntRange(int(lo), int(hi)).Draw(t, "length")
	return strings.Repeat("a", n/2) + strings.Repeat("b", n-n/2)
}

// breakRule changes the body at one site so that it breaks one of the site's rules, and says
// which field the answer must name; ok is false when the site has no rule to break.
func (c *contractEnv) breakRule(t *rapid.T, body map[string]any, st site) (field string, ok bool) {
	s := st.schema
	type change struct {
		value  any
		delete string // a required property to leave out instead
	}
	var options []change
	switch schemaType(s) {
	case "string":
		options = append(options, change{value: 12345.0})
		if m, ok := num(s, "maxLength"); ok {
			options = append(options, change{value: strings.Repeat("x", int(m)+1)})
		}
		if m, ok := num(s, "minLength"); ok && m > 0 {
			options = append(options, change{value: ""})
		}
		if len(asList(s["enum"])) > 0 {
			options = append(options, change{value: "not-a-documented-value"})
		}
		if s["format"] == "date-time" {
			options = append(options, change{value: "yesterday at noon"})
		}
	case "integer", "number":
		options = append(options, change{value: "text"})
		if m, ok := num(s, "minimum"); ok {
			options = append(options, change{value: m - 1})
		}
		if m, ok := num(s, "maximum"); ok {
			options = append(options, change{value: m + 1})
		}
	case "boolean":
		options = append(options, change{value: "yes"})
	case "array":
		options = append(options, change{value: "not a list"})
		if m, ok := num(s, "minItems"); ok && m > 0 {
			options = append(options, change{value: []any{}})
		}
	case "object":
		options = append(options, change{value: []any{"not", "an", "object"}})
		for _, r := range asList(s["required"]) {
			options = append(options, change{delete: r.(string)})
		}
	}
	if len(st.path) == 0 {
		// The root stays an object (another type is the decoder's 400, tested elsewhere).
		options = slices.DeleteFunc(options, func(ch change) bool { return ch.delete == "" })
	}
	if len(options) == 0 {
		return "", false
	}
	ch := rapid.SampledFrom(options).Draw(t, "rule")
	if ch.delete != "" {
		delete(lookupSite(body, st.path).(map[string]any), ch.delete)
		return site{path: append(slices.Clip(st.path), ch.delete)}.apiPath(), true
	}
	setSite(body, st.path, ch.value)
	return st.apiPath(), true
}

func lookupSite(v any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func setSite(body map[string]any, path []any, value any) {
	parent := lookupSite(body, path[:len(path)-1])
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = value
	case int:
		parent.([]any)[k] = value
	}
}

// send makes one request as a caller allowed to make it and returns the status, the error
// code and the message (from the envelope, or from OpenAI's error shape).
func (c *contractEnv) send(op contractOp, query string, body any, header ...string) (int, string, string) {
	raw, _ := json.Marshal(body)
	path := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, contractID)
	if query != "" {
		path += "?" + query
	}
	r := httptest.NewRequest(op.method, path, strings.NewReader(string(raw)))
	r.Header.Set("Content-Type", "application/json")
	if op.userOnly {
		r.Header.Set("Authorization", "Bearer "+c.bearer)
		r.Header.Set("X-Workspace-ID", c.e.ws)
	} else {
		r.Header.Set("X-API-Key", c.e.key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	c.e.srv.Handler().ServeHTTP(w, r)
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &env)
	var code string
	if json.Unmarshal(env.Error, &code) != nil {
		var oa struct{ Message, Code string }
		_ = json.Unmarshal(env.Error, &oa)
		code, env.Message = oa.Code, oa.Message
	}
	return w.Code, code, env.Message
}

// contractChecks makes rapid try a few cases per operation (every operation is a property of
// its own) unless -rapid.checks says otherwise.
func contractChecks(t *testing.T) {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if err := flag.Set("rapid.nofailfile", "true"); err != nil { // seeds are printed; no files in testdata
		t.Fatal(err)
	}
	if !set {
		old := flag.Lookup("rapid.checks").Value.String()
		if err := flag.Set("rapid.checks", "5"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = flag.Set("rapid.checks", old) })
	}
}

// conditional names the rules a handler keeps that depend on another field's value (the
// document says them in words): the answers of the accepted check may name them.
var conditional = map[string]*regexp.Regexp{
	"createEvaluator": regexp.MustCompile(`^config\.\w+: is required`), // each type's config, see the operation's description
}

// skipBody names the operations whose JSON body the server does not check as a whole against
// the document, with why.
var skipBody = map[string]string{
	"ingestSpans": "spans are checked one by one; a bad span is listed in the answer (route.itemwise)",
}

// TestSchemaContract proves the document and the server agree on every operation's request
// body: accepted bodies are never refused for their shape, bodies breaking a rule are refused
// naming the field.
func TestSchemaContract(t *testing.T) {
	contractChecks(t)
	c := newContractEnv(t)
	for _, op := range c.operations() {
		if op.body == nil || skipBody[op.op] != "" {
			continue
		}
		t.Run(op.op, func(t *testing.T) {
			t.Run("accepted", rapid.MakeCheck(func(rt *rapid.T) {
				var sites []site
				body := c.gen(rt, op.body, nil, &sites, 0)
				status, code, msg := c.send(op, "", body)
				if cond := conditional[op.op]; cond != nil && cond.MatchString(msg) {
					return
				}
				if (status == http.StatusBadRequest || status == http.StatusUnprocessableEntity) && shapeMessage.MatchString(msg) {
					rt.Fatalf("%s %s: a body the document accepts was refused: %d %s %q", op.method, op.path, status, code, msg)
				}
			}))
			t.Run("refused", rapid.MakeCheck(func(rt *rapid.T) {
				var sites []site
				body := c.gen(rt, op.body, nil, &sites, 0).(map[string]any)
				st := rapid.SampledFrom(sites).Draw(rt, "site")
				field, ok := c.breakRule(rt, body, st)
				if !ok {
					return
				}
				status, code, msg := c.send(op, "", body)
				if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
					rt.Fatalf("%s %s: a body breaking a rule at %s got %d %s %q, want 400 or 422", op.method, op.path, field, status, code, msg)
				}
				if code != "bad_request" && code != "validation_error" && !strings.Contains(code, "invalid") {
					rt.Fatalf("%s %s: error code %q, want bad_request or validation_error", op.method, op.path, code)
				}
				if !strings.Contains(msg, field) {
					rt.Fatalf("%s %s: message %q does not name %s", op.method, op.path, msg, field)
				}
			}))
		})
	}
}

// minimalBody is the smallest JSON body the document accepts for an operation: its required
// fields only, each at its smallest valid value ({} when the operation takes no JSON body).
func minimalBody(t *testing.T, doc []byte, method, path string) string {
	c := &contractEnv{}
	if err := json.Unmarshal(doc, &c.doc); err != nil {
		t.Fatal(err)
	}
	op, _ := c.doc["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	mt, _ := content["application/json"].(map[string]any)
	if mt == nil {
		return "{}"
	}
	raw, err := json.Marshal(c.smallest(mt["schema"].(map[string]any)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// smallest is the smallest value a schema accepts (its first alternative for a choice).
func (c *contractEnv) smallest(s map[string]any) any {
	s = c.resolve(s)
	if alts := append(asList(s["oneOf"]), asList(s["anyOf"])...); len(alts) > 0 && schemaType(s) == "" {
		return c.smallest(alts[0].(map[string]any))
	}
	if enum := asList(s["enum"]); len(enum) > 0 {
		return enum[0]
	}
	switch schemaType(s) {
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required := asList(s["required"])
		if alts := asList(s["anyOf"]); len(alts) > 0 {
			alt := alts[0].(map[string]any)
			required = append(required, asList(alt["required"])...)
			props = c.withAlternative(props, alt)
		}
		for _, r := range required {
			if p, ok := props[r.(string)].(map[string]any); ok {
				obj[r.(string)] = c.smallest(p)
			}
		}
		return obj
	case "array":
		n, _ := num(s, "minItems")
		items := []any{}
		for range int(n) {
			items = append(items, c.smallest(s["items"].(map[string]any)))
		}
		return items
	case "string":
		if s["format"] == "date-time" {
			return "2030-01-02T15:04:05Z"
		}
		n, _ := num(s, "minLength")
		return strings.Repeat("x", int(n))
	case "integer", "number":
		n, _ := num(s, "minimum")
		return n
	case "boolean":
		return false
	}
	return map[string]any{}
}

// TestParamContract proves the document and the server agree on every operation's query
// parameters and Idempotency-Key: each documented enum value is taken, and a value breaking a
// documented rule (an enum, a minimum, a date-time, the key's pattern) is a 4xx naming it.
func TestParamContract(t *testing.T) {
	c := newContractEnv(t)
	for _, op := range c.operations() {
		body := any(nil)
		if op.body != nil {
			body = c.smallest(op.body)
		}
		base := "" // the required query parameters, each with a value
		for _, p := range op.params {
			if p["in"] == "query" && p["required"] == true {
				v := "x"
				if enum := asList(c.resolve(p["schema"].(map[string]any))["enum"]); len(enum) > 0 {
					v = enum[0].(string) // a documented value
				}
				base += p["name"].(string) + "=" + v + "&"
			}
		}
		for _, p := range op.params {
			name, in := p["name"].(string), p["in"].(string)
			if p["required"] == true {
				continue
			}
			s := c.resolve(p["schema"].(map[string]any))
			var bad []string
			switch {
			case in == "header" && name == "Idempotency-Key":
				bad = append(bad, "has space", strings.Repeat("k", 256))
			case in != "query":
				continue
			case len(asList(s["enum"])) > 0:
				for _, v := range asList(s["enum"]) {
					status, code, msg := c.send(op, base+name+"="+v.(string), body)
					if status == http.StatusBadRequest && strings.Contains(msg, name) {
						t.Errorf("%s %s?%s=%s: a documented value was refused: %d %s %q", op.method, op.path, name, v, status, code, msg)
					}
				}
				bad = append(bad, "not-a-documented-value")
			case s["format"] == "date-time":
				bad = append(bad, "yesterday")
			}
			if m, ok := num(s, "minimum"); ok {
				bad = append(bad, strconv.Itoa(int(m)-1))
			}
			if m, ok := num(s, "maximum"); ok {
				bad = append(bad, strconv.Itoa(int(m)+1))
			}
			for _, v := range bad {
				var status int
				var code, msg string
				if in == "header" {
					status, code, msg = c.send(op, strings.TrimSuffix(base, "&"), body, name, v)
				} else {
					status, code, msg = c.send(op, base+name+"="+v, body)
				}
				if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity || !strings.Contains(msg, name) {
					t.Errorf("%s %s with %s %q: got %d %s %q, want 400 or 422 naming %s", op.method, op.path, name, v, status, code, msg, name)
				}
			}
		}
	}
}

package api

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/agentplane/agentplane/internal/domain"
)

// handlerFunc is what every route runs; a returned error becomes the error envelope.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// param documents one query parameter.
type param struct {
	name, typ, desc string
	enum            []string
	required        bool // checkParams answers 400 without it
}

// route is one entry of the route table: the single source of the mux, the OpenAPI document
// and the scope each operation requires.
type route struct {
	method  string
	path    string // absolute, e.g. /api/v1/agents/{id}
	op      string // operationId
	summary string
	desc    string // computed description; most routes leave it empty for descriptions/<op>.md
	tag     string
	scope   string // "" for public routes
	// also is a second scope the route requires besides scope (an experiment reads a dataset
	// and runs an agent); "" for none.
	also    string
	params  []param
	body    any // request body type (a zero value), nil when there is none
	resp    any // the "data" type of the success envelope (a zero value)
	list    bool
	status  int  // success status; 200 when zero
	creates bool // honours Idempotency-Key
	ndjson  bool // with body: also takes a JSONL body (application/x-ndjson), one body object a line
	// itemwise marks a body of items the handler checks one by one, keeping the good ones and
	// listing the others in its answer: the body is not refused as a whole for an item's shape.
	itemwise bool
	turn     bool // with creates: the handler honours Idempotency-Key itself (a chat turn replays its run, not a stored body)
	sse      bool // text/event-stream response
	raw      bool // response is not the JSON envelope (docs, metrics, openapi)
	content  bool // with raw: stored bytes of any media type, with ETag and Range (206, 304, 416; see contentResponses)
	emulator bool // only in the emulator
	server   bool // only on the server (users, logins and workspaces)
	// anyWorkspace marks a route that acts on no single workspace (the workspace list, say):
	// a bearer token needs no X-Workspace-ID there and any logged-in user may call it.
	anyWorkspace bool
	// userOnly marks a route only a logged-in user (bearer token) may call; an API key is 403.
	userOnly bool
	nocache  bool        // a GET whose answer changes without a store write (never served from the emulator's read cache)
	alsoOK   map[int]any // other success statuses and their data type (nil: the same as resp)
	errs     []int
	plan     bool // may answer 402 plan_limit_exceeded (server only)
	// openai marks a route of the OpenAI-compatible API: its errors are OpenAI's shape
	// ({"error": {message, type, code}}), not the envelope, and its answers are raw.
	openai bool
	// streams marks a raw route that answers text/event-stream when its body asks for it.
	streams bool
	// mcp marks the MCP server routes: the MCP SDK answers them (JSON-RPC), past the key check.
	mcp bool
	h   handlerFunc
}

func (rt route) pattern() string { return rt.method + " " + rt.path }

// tagged reports whether rt's answers carry an ETag and honour If-None-Match: every GET that
// answers with the JSON envelope.
func (rt route) tagged() bool { return rt.method == http.MethodGet && !rt.raw && !rt.sse }

var pageQuery = []param{
	{name: "page", typ: "integer", desc: "1-based page number (default 1). A deep page skips the rows of the pages before it on the list's index (OFFSET), unless the list's description says otherwise; cursor walks far at the cost of page 1."},
	{name: "limit", typ: "integer", desc: "Items per page, 1 to 100 (default 20)."},
	{name: "cursor", typ: "string", desc: "The next_cursor of the previous page, instead of page: walks the whole list, each page as cheap as the first."},
}

// openAPIDoc builds the OpenAPI 3.1 document from the route table.
// openAPIDocs holds the document of each distinct route table and mode built by this process:
// the document is a pure function of them, and building it (huma's reflection over every
// request and response type) was most of what New cost. BenchmarkOpenAPIDoc (2 cores shared with
// other builds, race detector off): 130–210 ms to build against 4–35 ms to find it again, the
// digest of the routes included; every node start and every test server of the module pays New.
var openAPIDocs sync.Map // string (routesKey) → []byte

// cachedOpenAPIDoc is openAPIDoc, built once per distinct route table and mode.
func cachedOpenAPIDoc(routes []route, emulator bool) ([]byte, error) {
	key := routesKey(routes, emulator)
	if doc, ok := openAPIDocs.Load(key); ok {
		return doc.([]byte), nil
	}
	doc, err := openAPIDoc(routes, emulator)
	if err != nil {
		return nil, err
	}
	openAPIDocs.Store(key, doc)
	return doc, nil
}

// routesKey is a digest of everything of the routes the document is made of: each route
// but its handler, with the types of its body and answer.
func routesKey(routes []route, emulator bool) string {
	h := sha256.New()
	fmt.Fprintf(h, "%t", emulator)
	for _, rt := range routes {
		rt.h = nil
		fmt.Fprintf(h, "\x00%#v", rt)
	}
	return string(h.Sum(nil))
}

func openAPIDoc(routes []route, emulator bool) ([]byte, error) {
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	reg.RegisterTypeAlias(reflect.TypeFor[domain.Time](), reflect.TypeFor[timeAlias]())
	reg.RegisterTypeAlias(reflect.TypeFor[json.RawMessage](), reflect.TypeFor[any]())
	reg.RegisterTypeAlias(reflect.TypeFor[domain.ToolRef](), reflect.TypeFor[toolRefSchema]())
	reg.RegisterTypeAlias(reflect.TypeFor[domain.SimFail](), reflect.TypeFor[simFailSchema]())
	title := "agentplane API"
	desc := "The agentplane REST API. Every JSON response uses the envelope `{\"data\", \"message\"}` " +
		"(lists add `pagination` with both `total_pages` and `pages`); errors are `{\"data\": null, \"error\", \"message\"}`. " +
		"Unknown request fields are ignored; malformed JSON and wrong types are 400, invalid values 422. " +
		"Request bodies are checked against the schemas of this document before anything else: a wrong type is 400, any other broken rule 422, both naming the field by its path (config.tools[0].name); a field sent as null counts as left out. " +
		"A query parameter outside its documented enum is 400. " +
		"Request bodies are JSON objects sent as `application/json` (charset absent or utf-8; `+json` suffix types are not accepted): another media type is 415; " +
		"a body that is not valid UTF-8, or `null`, is 400; a string holding NUL (`\\u0000`) anywhere in a body, nested objects included, is 422 naming its JSON path. " +
		"Every query parameter is at most 500 characters of UTF-8 without NUL (400 naming it); `%` and `_` in filters match literally. " +
		"A path id holding NUL, control characters or invalid UTF-8 is 404; a path with an empty, `.` or `..` segment is 404. " +
		"Request headers are limited to 65536 bytes in total: 431 `request_headers_too_large`. " +
		"Prompt templates use Mustache semantics without HTML escaping: `{{ variable }}`, sections `{{#list}}…{{/list}}`, inverted sections `{{^x}}…{{/x}}`. " +
		"POST requests that create something honour `Idempotency-Key`: the same key and body within 24 h replays the first response; the same key with another body is 409."
	if emulator {
		title = "agentplane emulator API"
		desc += " This is the local emulator: data lives in memory, any X-API-Key (or none) is accepted, and every caller shares one namespace."
	}
	doc := &huma.OpenAPI{
		OpenAPI: "3.1.0",
		Info: &huma.Info{Title: title, Version: "1.0.0", Description: desc,
			License: &huma.License{Name: licenseName, Identifier: licenseIdentifier}},
		Components: &huma.Components{
			Schemas: reg,
			Headers: responseHeaders(emulator),
			SecuritySchemes: map[string]*huma.SecurityScheme{
				"apiKey": {Type: "apiKey", In: "header", Name: "X-API-Key"},
				"bearer": {Type: "http", Scheme: "bearer", BearerFormat: "JWT"},
			},
		},
	}
	reg.Map()["ErrorEnvelope"] = &huma.Schema{
		Type: "object", Description: "The error envelope: a stable snake_case code and a sentence naming the field or id at fault.",
		Properties: map[string]*huma.Schema{
			"data":    {Type: "null"},
			"error":   {Type: "string", Description: "Stable snake_case error code, e.g. validation_error."},
			"message": {Type: "string"},
		},
		Required: []string{"data", "error", "message"},
	}
	reg.Map()["OpenAIErrorBody"] = reg.Schema(reflect.TypeFor[OpenAIErrorBody](), false, "")
	envelopeErr := &huma.Schema{Ref: "#/components/schemas/ErrorEnvelope"}
	openAIErr := &huma.Schema{Ref: "#/components/schemas/OpenAIErrorBody"}
	pagSchema := reg.Schema(reflect.TypeFor[Pagination](), true, "Pagination")
	requestTypes := map[string]bool{}
	tags := map[string]bool{}
	for _, rt := range routes {
		if (rt.emulator && !emulator) || (rt.server && emulator) {
			continue
		}
		op := &huma.Operation{
			OperationID: rt.op, Method: rt.method, Path: rt.path, Summary: rt.summary, Description: rt.description(),
			Responses: map[string]*huma.Response{},
		}
		if rt.tag != "" {
			op.Tags = []string{rt.tag}
			tags[rt.tag] = true
		}
		switch {
		case rt.userOnly:
			op.Security = []map[string][]string{{"bearer": {}}}
		case rt.anyWorkspace:
			op.Security = []map[string][]string{{"apiKey": {}}, {"bearer": {}}}
			op.Description = strings.TrimSpace(op.Description + "\n\nAny logged-in user, or an API key with scope `" + rt.scope + "`.")
		case rt.scope != "":
			op.Security = []map[string][]string{{"apiKey": {}}, {"bearer": {}}}
			needs := "scope `" + rt.scope + "`"
			if rt.also != "" {
				needs = "scopes `" + rt.scope + "` and `" + rt.also + "`"
			}
			op.Description = strings.TrimSpace(op.Description + "\n\nRequires " + needs + ". With a bearer token, send the workspace in `X-Workspace-ID`.")
			op.Parameters = append(op.Parameters, &huma.Param{Name: "X-Workspace-ID", In: "header", Schema: &huma.Schema{Type: "string"},
				Description: "The workspace to act in; required with a bearer token, ignored with an API key."})
		default:
			op.Security = []map[string][]string{}
		}
		for _, name := range pathParams(rt.path) {
			op.Parameters = append(op.Parameters, &huma.Param{
				Name: name, In: "path", Required: true, Schema: &huma.Schema{Type: "string"},
				Description: "Resource id (KSUID).",
			})
		}
		params := rt.params
		if rt.list {
			params = append(append([]param{}, pageQuery...), params...)
		}
		for _, p := range params {
			s := &huma.Schema{Type: p.typ}
			if p.typ == "string" {
				s.MaxLength = ptr(maxQueryValue)
			}
			if p.typ == "integer" && (p.name == "page" || p.name == "limit") {
				s.Minimum = ptr(1.0)
				if p.name == "limit" {
					s.Maximum = ptr(100.0)
				}
			}
			if slices.Contains(timeParams, p.name) {
				s.Format = "date-time" // read by createdRange
			}
			if p.name == lastEventIDParam {
				s.Minimum = ptr(0.0) // read by lastEventID
			}
			for _, e := range p.enum {
				s.Enum = append(s.Enum, e)
			}
			op.Parameters = append(op.Parameters, &huma.Param{Name: p.name, In: "query", Description: p.desc, Schema: s, Required: p.required})
		}
		if rt.creates {
			desc := "Makes the request safe to retry: the same key and body within 24 h returns the first response; another body: 409. " +
				"While the first request is still being handled, a retry is a 409 with Retry-After. If the server handling it stopped, " +
				"a retry once its lease ran out (at most 60 s) takes over: it replays the recorded response, answers from the execution " +
				"the first request created (execute, playground), or else handles the request."
			if rt.turn {
				desc = "Makes the message safe to retry: the same key and body within 24 h starts no second turn but answers from the first one; another body: 409."
			}
			op.Parameters = append(op.Parameters, &huma.Param{Name: "Idempotency-Key", In: "header",
				Schema:      &huma.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(maxIdempotencyKey), Pattern: idempotencyKeyPattern},
				Description: desc})
		}
		if rt.tagged() {
			op.Parameters = append(op.Parameters, &huma.Param{Name: "If-None-Match", In: "header", Schema: &huma.Schema{Type: "string"},
				Description: "The ETag of a response kept from before (or a list of them, or `*`): when it is the current one, the answer is 304 without a body."})
		}
		if rt.body != nil {
			t := reflect.TypeOf(rt.body)
			s := reg.Schema(t, true, rt.op+"Request")
			markRequestSchemas(reg, s, requestTypes)
			op.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: s}}}
			if rt.ndjson {
				op.RequestBody.Content[ndjson] = &huma.MediaType{Schema: &huma.Schema{Type: "string",
					Description: "JSON Lines: one JSON object a line, each of the shape of the application/json body without its list field."}}
			}
		}
		status := rt.status
		if status == 0 {
			status = http.StatusOK
		}
		op.Responses[strconv.Itoa(status)] = successResponse(reg, rt, pagSchema)
		if rt.sse {
			noContent := &huma.Response{
				Description: "Nothing more to stream: Last-Event-ID is at or past the execution's terminal frame (EventSource stops reconnecting)."}
			addHeaders(noContent, rt, http.StatusNoContent, emulator)
			op.Responses[strconv.Itoa(http.StatusNoContent)] = noContent
		}
		addHeaders(op.Responses[strconv.Itoa(status)], rt, status, emulator)
		if rt.content {
			contentResponses(op, rt, emulator)
		}
		if rt.tagged() {
			notModified := &huma.Response{Description: "Not Modified: If-None-Match named the current ETag; no body (use the one kept)."}
			addHeaders(notModified, rt, http.StatusNotModified, emulator)
			op.Responses[strconv.Itoa(http.StatusNotModified)] = notModified
		}
		for code, data := range rt.alsoOK {
			alt := rt
			if data != nil {
				alt.resp = data
			}
			resp := successResponse(reg, alt, pagSchema)
			resp.Description = http.StatusText(code)
			addHeaders(resp, rt, code, emulator)
			op.Responses[strconv.Itoa(code)] = resp
		}
		codes := errorStatuses(rt)
		if rt.plan && !emulator {
			codes = append(codes, http.StatusPaymentRequired)
			sort.Ints(codes)
		}
		errSchema := envelopeErr
		if rt.openai {
			errSchema = openAIErr
		}
		for _, code := range codes {
			resp := &huma.Response{
				Description: http.StatusText(code),
				Content:     map[string]*huma.MediaType{"application/json": {Schema: errSchema}},
			}
			addHeaders(resp, rt, code, emulator)
			op.Responses[strconv.Itoa(code)] = resp
		}
		doc.AddOperation(op)
	}
	names := make([]string, 0, len(tags))
	for t := range tags {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		d, ok := tagDescriptions[t]
		if !ok {
			return nil, fmt.Errorf("tag %q has no description in tagDescriptions", t)
		}
		doc.Tags = append(doc.Tags, &huma.Tag{Name: t, Description: d})
	}
	documentRegistered(reg)
	arraysNotNullable(doc)
	for name, s := range reg.Map() {
		allowNullRefs(reg, name, s)
		if requestTypes[name] {
			s.AdditionalProperties = nil // unknown request fields are ignored, not rejected
			matchServer(reg.TypeFromRef("#/components/schemas/"+name), s)
		}
	}
	return json.Marshal(doc)
}

// contentResponses documents what a content route adds to a 200: its request headers
// (If-None-Match, Range, If-Range), 206 and 304, and the headers of each.
func contentResponses(op *huma.Operation, rt route, emulator bool) {
	str := &huma.Schema{Type: "string"}
	op.Parameters = append(op.Parameters,
		&huma.Param{Name: "If-None-Match", In: "header", Schema: str, Description: "The content's ETag (its quoted SHA-256), a list of them, or `*`: when it matches, the answer is 304 without a body."},
		&huma.Param{Name: "Range", In: "header", Schema: str, Description: "Byte ranges to send, e.g. `bytes=0-1023`, `bytes=-500` or `bytes=100-`: 206 with those bytes; a range starting past the end is 416."},
		&huma.Param{Name: "If-Range", In: "header", Schema: str, Description: "An ETag or date: the Range is honoured only when it still matches, else the whole content is sent (200)."})
	etag := &huma.Header{Description: "The content's SHA-256 in lower-case hex, quoted: a strong entity tag.", Schema: str}
	headers := func(resp *huma.Response, status int) {
		addHeaders(resp, rt, status, emulator)
		resp.Headers["ETag"] = etag
		resp.Headers["Last-Modified"] = &huma.Header{Description: "When the asset was created.", Schema: str}
		resp.Headers["Accept-Ranges"] = &huma.Header{Description: "`bytes`: Range requests are honoured.", Schema: str}
	}
	headers(op.Responses["200"], http.StatusOK)
	partial := &huma.Response{Description: "Partial Content: the requested range (`Content-Range` says which), or `multipart/byteranges` for several.",
		Content: map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}
	headers(partial, http.StatusPartialContent)
	partial.Headers["Content-Range"] = &huma.Header{Description: "The bytes sent and the full size, e.g. `bytes 0-1023/4096`.", Schema: str}
	op.Responses["206"] = partial
	notModified := &huma.Response{Description: "Not Modified: If-None-Match named the content's ETag; no body."}
	headers(notModified, http.StatusNotModified)
	op.Responses["304"] = notModified
}

// timeAlias documents store.Time as an RFC 3339 date-time string.
type timeAlias = stdTime

func successResponse(reg huma.Registry, rt route, pag *huma.Schema) *huma.Response {
	switch {
	case rt.sse:
		return sseResponse(reg, rt)
	case rt.content:
		return &huma.Response{Description: "The content, with its own media type in `Content-Type` (the schema's `application/octet-stream` stands for any).",
			Content: map[string]*huma.MediaType{"application/octet-stream": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}
	case rt.raw:
		var s *huma.Schema
		if rt.resp != nil {
			s = reg.Schema(reflect.TypeOf(rt.resp), true, rt.op+"Response")
		} else {
			s = &huma.Schema{}
		}
		ct := "application/json"
		if rt.resp == nil {
			ct = "text/plain"
		}
		resp := &huma.Response{Description: "OK", Content: map[string]*huma.MediaType{ct: {Schema: s}}}
		if rt.streams {
			resp.Description = "The answer as JSON; with `\"stream\": true`, a `text/event-stream` of `data: <JSON>` lines instead (see the operation's description)."
			resp.Content["text/event-stream"] = &huma.MediaType{Schema: &huma.Schema{Type: "string"}}
		}
		return resp
	}
	data := &huma.Schema{Type: "null"}
	if rt.resp != nil {
		data = reg.Schema(reflect.TypeOf(rt.resp), true, rt.op+"Data")
	}
	props := map[string]*huma.Schema{"message": {Type: "string"}}
	req := []string{"data", "message"}
	if rt.list {
		props["data"] = &huma.Schema{Type: "array", Items: data}
		props["pagination"] = pag
		req = append(req, "pagination")
	} else {
		props["data"] = data
	}
	return &huma.Response{
		Description: http.StatusText(statusOr200(rt.status)),
		Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
			Type: "object", Properties: props, Required: req,
		}}},
	}
}

func statusOr200(s int) int {
	if s == 0 {
		return http.StatusOK
	}
	return s
}

// errorStatuses lists the error responses a route can give, for the document.
func errorStatuses(rt route) []int {
	set := map[int]bool{http.StatusInternalServerError: true}
	if rt.scope != "" {
		set[http.StatusUnauthorized], set[http.StatusForbidden], set[http.StatusTooManyRequests] = true, true, true
		if !rt.anyWorkspace {
			set[http.StatusBadRequest] = true // a bearer token without X-Workspace-ID
		}
	}
	if rt.list {
		set[http.StatusBadRequest] = true
	}
	if len(pathParams(rt.path)) > 0 {
		set[http.StatusNotFound] = true
	}
	if rt.body != nil {
		set[http.StatusBadRequest], set[http.StatusUnprocessableEntity] = true, true
		set[http.StatusRequestEntityTooLarge], set[http.StatusUnsupportedMediaType] = true, true
	}
	if rt.creates {
		set[http.StatusConflict] = true
	}
	for _, c := range rt.errs {
		set[c] = true
	}
	out := make([]int, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Ints(out)
	return out
}

// markRequestSchemas records the named schemas reachable from a request body.
func markRequestSchemas(reg huma.Registry, s *huma.Schema, seen map[string]bool) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
		if seen[name] {
			return
		}
		seen[name] = true
		markRequestSchemas(reg, reg.Map()[name], seen)
		return
	}
	for _, p := range s.Properties {
		markRequestSchemas(reg, p, seen)
	}
	markRequestSchemas(reg, s.Items, seen)
	if as, ok := s.AdditionalProperties.(*huma.Schema); ok {
		markRequestSchemas(reg, as, seen)
	}
	for _, sub := range append(append(s.OneOf, s.AnyOf...), s.AllOf...) {
		markRequestSchemas(reg, sub, seen)
	}
}

// allowNullRefs documents as nullable every pointer field the server may send as null (a nil
// pointer without omitempty is written as null): pointer-to-struct fields (a bare $ref in
// huma's output) become "that object or null", and aliased scalars such as *store.Time get
// the null type.
func allowNullRefs(reg huma.Registry, name string, s *huma.Schema) {
	t := reg.TypeFromRef("#/components/schemas/" + name)
	if t == nil || t.Kind() != reflect.Struct {
		return
	}
	// VisibleFields reaches the fields of embedded structs too (ExecutionNode embeds
	// *Execution, whose completed_at is null until the run ends).
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() || f.Type.Kind() != reflect.Pointer {
			continue
		}
		jname, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jname == "" || jname == "-" {
			continue
		}
		// A nil pointer with omitempty is left out, never sent as null; nullable:"false"
		// marks a pointer the server always sets.
		if strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") || f.Tag.Get("nullable") == "false" {
			continue
		}
		switch p := s.Properties[jname]; {
		case p == nil:
		case p.Ref != "":
			s.Properties[jname] = &huma.Schema{AnyOf: []*huma.Schema{{Ref: p.Ref}, {Type: "null"}}, Description: p.Description}
		case p.Type != "" && p.Type != huma.TypeArray: // arrays are never null (see arraysNotNullable)
			p.Nullable = true // e.g. *store.Time, documented through its alias as a date-time string
		}
	}
}

// matchServer makes a request schema say what the server enforces where huma's reading of the
// Go type says more. A field left out decodes as its zero value, so only a field tagged
// required:"true", or one whose zero value its own tags refuse (minLength, an enum without "",
// a minimum above 0, minItems), is required; and a string field with omitempty cannot tell "" from
// left out, so its enum takes "" too.
func matchServer(t reflect.Type, s *huma.Schema) {
	if t == nil || t.Kind() != reflect.Struct {
		return
	}
	byName := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		byName[name] = f
		p := s.Properties[name]
		if p != nil && len(p.Enum) > 0 && f.Type.Kind() == reflect.String && strings.Contains(opts, "omitempty") && !slices.Contains(p.Enum, any("")) {
			p.Enum = append(p.Enum, "")
		}
	}
	var required []string
	for _, name := range s.Required {
		f, ok := byName[name]
		if !ok || f.Tag.Get("required") == "true" || zeroRefused(f.Tag) {
			required = append(required, name)
		}
	}
	s.Required = required
}

// zeroRefused reports whether a field's tags refuse its zero value ("" or 0).
func zeroRefused(tag reflect.StructTag) bool {
	if n, err := strconv.Atoi(tag.Get("minLength")); err == nil && n > 0 {
		return true
	}
	if n, err := strconv.ParseFloat(tag.Get("minimum"), 64); err == nil && n > 0 {
		return true
	}
	if n, err := strconv.Atoi(tag.Get("minItems")); err == nil && n > 0 {
		return true
	}
	enum, ok := tag.Lookup("enum")
	return ok && !slices.Contains(strings.Split(enum, ","), "")
}

var pathParamRe = regexp.MustCompile(`\{([a-z_]+)\}`)

func pathParams(path string) []string {
	var out []string
	for _, m := range pathParamRe.FindAllStringSubmatch(path, -1) {
		out = append(out, m[1])
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// checkRoutes rejects a table with a duplicate pattern or operation id.
func checkRoutes(routes []route) error {
	seenPat, seenOp := map[string]bool{}, map[string]bool{}
	for _, rt := range routes {
		if seenPat[rt.pattern()] {
			return fmt.Errorf("route %s registered twice", rt.pattern())
		}
		if seenOp[rt.op] {
			return fmt.Errorf("operation id %s used twice", rt.op)
		}
		seenPat[rt.pattern()], seenOp[rt.op] = true, true
	}
	return nil
}

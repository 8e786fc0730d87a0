// Package openapicheck validates OpenAPI 3.1 documents and API responses
// against them, fully offline, for use in tests.
package openapicheck

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The official OpenAPI 3.1 meta-schema and the 3.1 Schema Object dialect it
// is paired with; see README.md for where they come from.
var (
	//go:embed oas31.schema.json
	oas31Schema []byte
	//go:embed oas31-dialect-base.schema.json
	oas31DialectSchema []byte
	//go:embed oas31-meta-base.schema.json
	oas31MetaBaseSchema []byte
)

const (
	// MetaSchemaID is the $id of the embedded OpenAPI 3.1 meta-schema that
	// ValidateDocument checks documents against.
	MetaSchemaID = "https://spec.openapis.org/oas/3.1/schema/2025-11-23"

	dialectID  = "https://spec.openapis.org/oas/3.1/dialect/base"
	metaBaseID = "https://spec.openapis.org/oas/3.1/meta/base"

	// docURL is the base URL the checked document is registered under. The
	// .invalid TLD cannot resolve, and nothing is ever fetched anyway.
	docURL = "https://openapicheck.invalid/openapi.json"
)

// offlineLoader refuses every URL, so the compiler only sees the resources
// added to it explicitly (and the JSON Schema meta-schemas built into
// jsonschema/v6).
type offlineLoader struct{}

func (offlineLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("openapicheck works offline: %s is not an embedded resource", u)
}

// oasVocabID names the OAS 3.1 base vocabulary (discriminator, xml,
// externalDocs, example) that meta/base describes.
const oasVocabID = "https://spec.openapis.org/oas/3.1/vocab/base"

var oasVocab struct {
	once  sync.Once
	vocab *jsonschema.Vocabulary
	err   error
}

// oasBaseVocabulary returns the OAS base vocabulary, whose meta-schema
// (meta/base) then checks the shape of discriminator, xml and externalDocs
// in every schema compiled for a document. Its keywords add no assertions.
func oasBaseVocabulary() (*jsonschema.Vocabulary, error) {
	oasVocab.once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(oas31MetaBaseSchema))
		if err != nil {
			oasVocab.err = fmt.Errorf("openapicheck: embedded %s: %w", metaBaseID, err)
			return
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseLoader(offlineLoader{})
		if err := c.AddResource(metaBaseID, doc); err != nil {
			oasVocab.err = fmt.Errorf("openapicheck: embedded %s: %w", metaBaseID, err)
			return
		}
		sch, err := c.Compile(metaBaseID)
		if err != nil {
			oasVocab.err = fmt.Errorf("openapicheck: compiling %s: %w", metaBaseID, err)
			return
		}
		oasVocab.vocab = &jsonschema.Vocabulary{
			URL:    oasVocabID,
			Schema: sch,
			Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
				return nil, nil
			},
		}
	})
	return oasVocab.vocab, oasVocab.err
}

// newDocCompiler returns a compiler for the schemas of an OpenAPI document:
// like newCompiler, plus the OAS base vocabulary asserted for every schema
// (3.1 documents default to the OAS dialect).
func newDocCompiler() (*jsonschema.Compiler, error) {
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	vocab, err := oasBaseVocabulary()
	if err != nil {
		return nil, err
	}
	c.RegisterVocabulary(vocab)
	c.AssertVocabs()
	return c, nil
}

// newCompiler returns a draft 2020-12 compiler that cannot load anything
// from the network or disk and knows the OAS 3.1 dialect schemas.
func newCompiler() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(offlineLoader{})
	for _, r := range []struct {
		id  string
		src []byte
	}{
		{dialectID, oas31DialectSchema},
		{metaBaseID, oas31MetaBaseSchema},
	} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.src))
		if err != nil {
			return nil, fmt.Errorf("openapicheck: embedded %s: %w", r.id, err)
		}
		if err := c.AddResource(r.id, doc); err != nil {
			return nil, fmt.Errorf("openapicheck: embedded %s: %w", r.id, err)
		}
	}
	return c, nil
}

var meta struct {
	once sync.Once
	sch  *jsonschema.Schema
	err  error
}

// metaSchema compiles the embedded OpenAPI 3.1 meta-schema once.
func metaSchema() (*jsonschema.Schema, error) {
	meta.once.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(oas31Schema))
		if err != nil {
			meta.err = fmt.Errorf("openapicheck: embedded meta-schema: %w", err)
			return
		}
		c, err := newCompiler()
		if err != nil {
			meta.err = err
			return
		}
		if err := c.AddResource(MetaSchemaID, doc); err != nil {
			meta.err = fmt.Errorf("openapicheck: embedded meta-schema: %w", err)
			return
		}
		meta.sch, meta.err = c.Compile(MetaSchemaID)
		if meta.err != nil {
			meta.err = fmt.Errorf("openapicheck: compiling meta-schema: %w", meta.err)
		}
	})
	return meta.sch, meta.err
}

// ValidateDocument checks that doc (JSON) is a valid OpenAPI 3.1 document:
// it must satisfy the official 3.1 meta-schema, every "$ref" in it must
// resolve within the document, and every schema under components/schemas
// must compile as JSON Schema 2020-12.
func ValidateDocument(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("openapicheck: document is not valid JSON: %w", err)
	}
	sch, err := metaSchema()
	if err != nil {
		return err
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("openapicheck: document does not conform to the OpenAPI 3.1 schema: %w", err)
	}
	if err := checkRefs(v); err != nil {
		return err
	}
	return compileComponentSchemas(v)
}

// compileComponentSchemas compiles each components/schemas entry (in name
// order) and reports the first that fails.
func compileComponentSchemas(doc any) error {
	schemas, _ := lookup(doc, "/components/schemas")
	m, _ := schemas.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	c, err := newDocCompiler()
	if err != nil {
		return err
	}
	if err := c.AddResource(docURL, doc); err != nil {
		return fmt.Errorf("openapicheck: %w", err)
	}
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ptr := "/components/schemas/" + escapeToken(name)
		if _, err := c.Compile(docURL + "#" + fragment(ptr)); err != nil {
			return fmt.Errorf("openapicheck: components/schemas/%s is not a valid JSON Schema 2020-12 schema: %w", name, err)
		}
	}
	return nil
}

// --- $ref checking ---------------------------------------------------------

// literalKeys hold example or constant data whose contents are not OpenAPI
// or JSON Schema structure, so a "$ref" inside them is just data.
var literalKeys = map[string]bool{"example": true, "default": true, "const": true, "enum": true}

// nameMapKeys hold maps keyed by user-chosen names, where a key such as
// "default" or "example" is a name rather than a keyword.
var nameMapKeys = map[string]bool{
	"paths": true, "webhooks": true, "schemas": true, "responses": true, "parameters": true,
	"examples": true, "requestBodies": true, "headers": true, "securitySchemes": true,
	"links": true, "callbacks": true, "pathItems": true, "content": true, "encoding": true,
	"variables": true, "mapping": true, "properties": true, "patternProperties": true,
	"$defs": true, "definitions": true, "dependentSchemas": true, "scopes": true,
}

// maxRefErrors caps how many broken references one error lists.
const maxRefErrors = 20

// checkRefs reports every "$ref" string in doc that does not resolve to an
// existing location in doc (only same-document references can resolve).
func checkRefs(doc any) error {
	anchors := map[string]bool{}
	collectAnchors(doc, anchors)
	var broken []string
	var walk func(v any, ptr, parentKey string)
	walk = func(v any, ptr, parentKey string) {
		switch v := v.(type) {
		case map[string]any:
			isNameMap := nameMapKeys[parentKey]
			if ref, ok := v["$ref"].(string); ok && !isNameMap {
				if err := resolveRef(doc, ref, anchors); err != nil {
					broken = append(broken, fmt.Sprintf("%s (at #%s)", err, ptr))
				}
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !isNameMap && (literalKeys[k] || strings.HasPrefix(k, "x-")) {
					continue
				}
				child := v[k]
				// In schemas, "examples" is an array of literal values; in
				// OpenAPI objects it is a map of Example Objects.
				if k == "examples" {
					if _, isArray := child.([]any); isArray {
						continue
					}
				}
				// An Example Object's "value" is literal data.
				if k == "value" && strings.HasSuffix(parentPath(ptr), "/examples") {
					continue
				}
				walk(child, ptr+"/"+escapeToken(k), k)
			}
		case []any:
			for i, e := range v {
				walk(e, ptr+"/"+strconv.Itoa(i), "")
			}
		}
	}
	walk(doc, "", "")
	if len(broken) == 0 {
		return nil
	}
	msg := strings.Join(broken[:min(len(broken), maxRefErrors)], "\n  ")
	if len(broken) > maxRefErrors {
		msg += fmt.Sprintf("\n  ... and %d more", len(broken)-maxRefErrors)
	}
	return fmt.Errorf("openapicheck: %d unresolved $ref(s):\n  %s", len(broken), msg)
}

// parentPath drops the last token of a JSON pointer.
func parentPath(ptr string) string {
	if i := strings.LastIndexByte(ptr, '/'); i >= 0 {
		return ptr[:i]
	}
	return ""
}

// collectAnchors records every $anchor and $dynamicAnchor name in doc.
func collectAnchors(v any, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range []string{"$anchor", "$dynamicAnchor"} {
			if a, ok := v[k].(string); ok {
				into[a] = true
			}
		}
		for _, c := range v {
			collectAnchors(c, into)
		}
	case []any:
		for _, c := range v {
			collectAnchors(c, into)
		}
	}
}

// resolveRef checks that ref ("#/json/pointer" or "#anchor") exists in doc.
func resolveRef(doc any, ref string, anchors map[string]bool) error {
	if !strings.HasPrefix(ref, "#") {
		return fmt.Errorf("$ref %q points outside the document and cannot be resolved offline", ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return fmt.Errorf("$ref %q: bad percent-encoding: %v", ref, err)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		if !anchors[frag] {
			return fmt.Errorf("$ref %q: no $anchor %q in the document", ref, frag)
		}
		return nil
	}
	if _, err := lookup(doc, frag); err != nil {
		return fmt.Errorf("$ref %q does not resolve: %v", ref, err)
	}
	return nil
}

// --- JSON pointers -----------------------------------------------------------

// escapeToken escapes one JSON pointer reference token (RFC 6901).
func escapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// unescapeToken reverses escapeToken.
func unescapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// fragment percent-encodes a JSON pointer for use as a URI fragment.
func fragment(ptr string) string {
	toks := strings.Split(ptr, "/")
	for i, t := range toks {
		toks[i] = url.PathEscape(t)
	}
	return strings.Join(toks, "/")
}

// lookup returns the value at JSON pointer ptr ("" is the whole document).
func lookup(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("invalid JSON pointer %q", ptr)
	}
	v := doc
	for _, raw := range strings.Split(ptr[1:], "/") {
		tok := unescapeToken(raw)
		switch cur := v.(type) {
		case map[string]any:
			next, ok := cur[tok]
			if !ok {
				return nil, fmt.Errorf("no %q at %q", tok, ptr)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur) || tok != strconv.Itoa(i) {
				return nil, fmt.Errorf("no index %q at %q", tok, ptr)
			}
			v = cur[i]
		default:
			return nil, fmt.Errorf("cannot descend into %q at %q", tok, ptr)
		}
	}
	return v, nil
}

// maxRefHops bounds chains of Reference Objects (and catches cycles).
const maxRefHops = 32

// deref follows Reference Objects ({"$ref": "#/..."}) starting at ptr and
// returns the pointer and value of the object finally referred to.
func deref(doc any, ptr string) (string, any, error) {
	v, err := lookup(doc, ptr)
	if err != nil {
		return "", nil, err
	}
	for range maxRefHops {
		m, ok := v.(map[string]any)
		if !ok {
			return ptr, v, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return ptr, v, nil
		}
		if !strings.HasPrefix(ref, "#") {
			return "", nil, fmt.Errorf("$ref %q at #%s points outside the document", ref, ptr)
		}
		frag, err := url.PathUnescape(ref[1:])
		if err != nil {
			return "", nil, fmt.Errorf("$ref %q at #%s: %v", ref, ptr, err)
		}
		if v, err = lookup(doc, frag); err != nil {
			return "", nil, fmt.Errorf("$ref %q at #%s: %v", ref, ptr, err)
		}
		ptr = frag
	}
	return "", nil, fmt.Errorf("too many $ref hops from #%s", ptr)
}

// --- response validation -----------------------------------------------------

// httpMethods are the operation keys of a Path Item Object.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// segKind orders path template segments by specificity.
type segKind int

const (
	segParam   segKind = iota // "{id}"
	segMixed                  // "v{major}.json"
	segLiteral                // "agents"
)

type segment struct {
	kind    segKind
	literal string
	re      *regexp.Regexp // for segMixed
}

func (s segment) matches(raw string) bool {
	if raw == "" {
		return false
	}
	dec, err := url.PathUnescape(raw)
	if err != nil {
		dec = raw
	}
	switch s.kind {
	case segLiteral:
		return s.literal == raw || s.literal == dec
	case segMixed:
		return s.re.MatchString(dec)
	default:
		return true
	}
}

var paramRE = regexp.MustCompile(`\{[^{}/]*\}`)

func parseSegment(s string) segment {
	if !strings.Contains(s, "{") {
		return segment{kind: segLiteral, literal: s}
	}
	if paramRE.FindString(s) == s {
		return segment{kind: segParam}
	}
	var sb strings.Builder
	sb.WriteString("^")
	last := 0
	for _, loc := range paramRE.FindAllStringIndex(s, -1) {
		sb.WriteString(regexp.QuoteMeta(s[last:loc[0]]))
		sb.WriteString("[^/]+")
		last = loc[1]
	}
	sb.WriteString(regexp.QuoteMeta(s[last:]))
	sb.WriteString("$")
	return segment{kind: segMixed, re: regexp.MustCompile(sb.String())}
}

// route is one entry of the document's paths.
type route struct {
	template string
	segs     []segment
	ptr      string            // pointer to the (dereferenced) Path Item Object
	ops      map[string]string // lower-case method -> pointer to its Operation Object
}

// moreSpecific reports whether a should win over b when both match.
func (a *route) moreSpecific(b *route) bool {
	for i := range a.segs {
		if a.segs[i].kind != b.segs[i].kind {
			return a.segs[i].kind > b.segs[i].kind
		}
	}
	return a.template < b.template
}

// compiledResponse is a cached lookup result for one operation and
// documented response key.
type compiledResponse struct {
	schema    *jsonschema.Schema // nil when any JSON (or no body) is accepted
	jsonBody  bool               // a JSON media type is documented
	noContent bool               // the response documents no content at all
	mediaType string
}

// ResponseValidator checks API responses against the operations of an
// OpenAPI 3.1 document; it is safe for concurrent use.
type ResponseValidator struct {
	doc    any
	routes []*route

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	cache    map[string]*compiledResponse
	streams  map[string]*jsonschema.Schema // text/event-stream schemas by response pointer
}

// NewResponseValidator parses doc (JSON) and indexes its paths; response
// schemas are compiled lazily and cached.
func NewResponseValidator(doc []byte) (*ResponseValidator, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("openapicheck: document is not valid JSON: %w", err)
	}
	root, _ := v.(map[string]any)
	paths, ok := root["paths"].(map[string]any)
	if !ok {
		return nil, errors.New("openapicheck: document has no paths object")
	}
	c, err := newDocCompiler()
	if err != nil {
		return nil, err
	}
	c.AssertFormat()
	if err := c.AddResource(docURL, v); err != nil {
		return nil, fmt.Errorf("openapicheck: %w", err)
	}
	rv := &ResponseValidator{doc: v, compiler: c, cache: map[string]*compiledResponse{}}
	for tmpl := range paths {
		if !strings.HasPrefix(tmpl, "/") {
			return nil, fmt.Errorf("openapicheck: path %q does not start with /", tmpl)
		}
		ptr, item, err := deref(v, "/paths/"+escapeToken(tmpl))
		if err != nil {
			return nil, fmt.Errorf("openapicheck: path %q: %w", tmpl, err)
		}
		itemObj, _ := item.(map[string]any)
		r := &route{template: tmpl, ptr: ptr, ops: map[string]string{}}
		for _, s := range strings.Split(tmpl[1:], "/") {
			r.segs = append(r.segs, parseSegment(s))
		}
		for _, m := range httpMethods {
			if _, ok := itemObj[m].(map[string]any); ok {
				r.ops[m] = ptr + "/" + m
			}
		}
		rv.routes = append(rv.routes, r)
	}
	sort.Slice(rv.routes, func(i, j int) bool { return rv.routes[i].template < rv.routes[j].template })
	return rv, nil
}

// match finds the most specific route for a concrete path that documents
// method; pathKnown reports whether any route matched the path at all.
func (v *ResponseValidator) match(method, path string) (r *route, opPtr string, pathKnown bool) {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if !strings.HasPrefix(path, "/") {
		return nil, "", false
	}
	segs := strings.Split(path[1:], "/")
	for _, cand := range v.routes {
		if len(cand.segs) != len(segs) {
			continue
		}
		ok := true
		for i, s := range cand.segs {
			if !s.matches(segs[i]) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		pathKnown = true
		p, has := cand.ops[method]
		if !has {
			continue
		}
		if r == nil || cand.moreSpecific(r) {
			r, opPtr = cand, p
		}
	}
	return r, opPtr, pathKnown
}

// Validate checks a response to method path (a concrete request path such
// as /api/v1/agents/ag_1) with the given status and body against the
// document; undocumented paths, methods and statuses are errors too.
func (v *ResponseValidator) Validate(method, path string, status int, body []byte) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("openapicheck: %s %s -> %d: %s", method, path, status, fmt.Sprintf(format, args...))
	}
	m := strings.ToLower(method)
	r, opPtr, pathKnown := v.match(m, path)
	skipBody := false
	if r == nil && m == "head" {
		// Servers answer HEAD with their GET handler and no body.
		r, opPtr, pathKnown = v.match("get", path)
		skipBody = true
	}
	if r == nil {
		if pathKnown {
			return fail("undocumented method: no %s operation on a matching path", strings.ToUpper(m))
		}
		return fail("undocumented path: no template in paths matches")
	}

	key, cr, err := v.response(r, opPtr, status)
	if err != nil {
		return fail("%v", err)
	}
	if skipBody {
		return nil
	}
	where := fmt.Sprintf("%s %s response %q", strings.ToUpper(m), r.template, key)
	switch {
	case cr.noContent:
		if len(bytes.TrimSpace(body)) != 0 {
			return fail("%s documents no content, but the body has %d bytes", where, len(body))
		}
		return nil
	case !cr.jsonBody:
		return nil // only non-JSON media types are documented; nothing to check
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fail("%s: body is not valid JSON (%s): %v", where, cr.mediaType, err)
	}
	if cr.schema == nil {
		return nil
	}
	if err := cr.schema.Validate(inst); err != nil {
		return fail("%s: body does not match the %s schema: %v", where, cr.mediaType, err)
	}
	return nil
}

// response finds (and compiles, once) the documented response of an
// operation for status: the exact code, then the "4XX"-style range, then
// "default".
func (v *ResponseValidator) response(r *route, opPtr string, status int) (string, *compiledResponse, error) {
	op, err := lookup(v.doc, opPtr)
	if err != nil {
		return "", nil, err
	}
	responses, _ := op.(map[string]any)["responses"].(map[string]any)
	code := strconv.Itoa(status)
	candidates := []string{"default"}
	if len(code) == 3 {
		candidates = []string{code, code[:1] + "XX", code[:1] + "xx", "default"}
	}
	var key string
	for _, k := range candidates {
		if _, ok := responses[k]; ok {
			key = k
			break
		}
	}
	if key == "" {
		documented := make([]string, 0, len(responses))
		for k := range responses {
			documented = append(documented, k)
		}
		sort.Strings(documented)
		return "", nil, fmt.Errorf("undocumented status for %s %s (documented: %s)",
			strings.ToUpper(opPtr[strings.LastIndexByte(opPtr, '/')+1:]), r.template, strings.Join(documented, ", "))
	}

	cacheKey := opPtr + " " + key
	v.mu.Lock()
	defer v.mu.Unlock()
	if cr, ok := v.cache[cacheKey]; ok {
		return key, cr, nil
	}
	cr, err := v.compileResponse(opPtr + "/responses/" + escapeToken(key))
	if err != nil {
		return "", nil, fmt.Errorf("response %q of %s: %w", key, r.template, err)
	}
	v.cache[cacheKey] = cr
	return key, cr, nil
}

// compileResponse builds the cache entry for the Response Object (or
// Reference Object) at ptr. Callers hold v.mu.
func (v *ResponseValidator) compileResponse(ptr string) (*compiledResponse, error) {
	respPtr, resp, err := deref(v.doc, ptr)
	if err != nil {
		return nil, err
	}
	respObj, _ := resp.(map[string]any)
	content, _ := respObj["content"].(map[string]any)
	if len(content) == 0 {
		return &compiledResponse{noContent: true}, nil
	}
	mt := pickJSONMediaType(content)
	if mt == "" {
		return &compiledResponse{}, nil
	}
	cr := &compiledResponse{jsonBody: true, mediaType: mt}
	mtObj, _ := content[mt].(map[string]any)
	if _, ok := mtObj["schema"]; !ok {
		return cr, nil
	}
	schemaPtr := respPtr + "/content/" + escapeToken(mt) + "/schema"
	if cr.schema, err = v.compiler.Compile(docURL + "#" + fragment(schemaPtr)); err != nil {
		return nil, fmt.Errorf("compiling schema #%s: %w", schemaPtr, err)
	}
	return cr, nil
}

// pickJSONMediaType prefers application/json, then any other JSON media
// type (application/problem+json, application/json; charset=utf-8, ...).
func pickJSONMediaType(content map[string]any) string {
	if _, ok := content["application/json"]; ok {
		return "application/json"
	}
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if i := slices.IndexFunc(keys, func(k string) bool {
		base, _, _ := strings.Cut(strings.ToLower(k), ";")
		base = strings.TrimSpace(base)
		return base == "application/json" || strings.HasSuffix(base, "+json")
	}); i >= 0 {
		return keys[i]
	}
	return ""
}

// StreamMediaType is the media type of Server-Sent Events responses.
const StreamMediaType = "text/event-stream"

// ValidateStream checks a Server-Sent Events response to method path: the
// status must be documented with a text/event-stream media type, and every
// frame of body (comments skipped) must match that media type's schema as the
// object {"id": <id>, "event": <name>, "data": <data parsed as JSON>}. An id
// that is a decimal integer is passed as a number; a frame without an id or
// event leaves that member out; data lines are joined with "\n".
func (v *ResponseValidator) ValidateStream(method, path string, status int, body []byte) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("openapicheck: %s %s -> %d: %s", method, path, status, fmt.Sprintf(format, args...))
	}
	r, opPtr, pathKnown := v.match(strings.ToLower(method), path)
	if r == nil {
		if pathKnown {
			return fail("undocumented method: no %s operation on a matching path", strings.ToUpper(method))
		}
		return fail("undocumented path: no template in paths matches")
	}
	key, _, err := v.response(r, opPtr, status)
	if err != nil {
		return fail("%v", err)
	}
	sch, err := v.streamSchema(opPtr + "/responses/" + escapeToken(key))
	if err != nil {
		return fail("%v", err)
	}
	for i, frame := range sseFrames(body) {
		inst := map[string]any{}
		if frame.id != "" {
			if n, err := strconv.ParseInt(frame.id, 10, 64); err == nil {
				inst["id"] = json.Number(strconv.FormatInt(n, 10))
			} else {
				inst["id"] = frame.id
			}
		}
		if frame.event != "" {
			inst["event"] = frame.event
		}
		if frame.hasData {
			data, err := jsonschema.UnmarshalJSON(strings.NewReader(frame.data))
			if err != nil {
				return fail("frame %d (%s): data is not JSON: %v", i, frame.event, err)
			}
			inst["data"] = data
		}
		if err := sch.Validate(inst); err != nil {
			return fail("frame %d (%s) does not match the %s schema: %v", i, frame.event, StreamMediaType, err)
		}
	}
	return nil
}

// streamSchema compiles (once) the text/event-stream schema of the Response
// Object at ptr.
func (v *ResponseValidator) streamSchema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.streams[ptr]; ok {
		return s, nil
	}
	respPtr, resp, err := deref(v.doc, ptr)
	if err != nil {
		return nil, err
	}
	respObj, _ := resp.(map[string]any)
	content, _ := respObj["content"].(map[string]any)
	mtObj, ok := content[StreamMediaType].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("response #%s documents no %s content", respPtr, StreamMediaType)
	}
	if _, ok := mtObj["schema"]; !ok {
		return nil, fmt.Errorf("response #%s documents no schema for %s", respPtr, StreamMediaType)
	}
	schemaPtr := respPtr + "/content/" + escapeToken(StreamMediaType) + "/schema"
	s, err := v.compiler.Compile(docURL + "#" + fragment(schemaPtr))
	if err != nil {
		return nil, fmt.Errorf("compiling schema #%s: %w", schemaPtr, err)
	}
	if v.streams == nil {
		v.streams = map[string]*jsonschema.Schema{}
	}
	v.streams[ptr] = s
	return s, nil
}

// sseFrame is one event of a text/event-stream body.
type sseFrame struct {
	id, event, data string
	hasData         bool
}

// sseFrames splits an event stream into its frames, skipping comments and
// blank frames (the Server-Sent Events parsing rules, without retry).
func sseFrames(body []byte) []sseFrame {
	var frames []sseFrame
	var cur sseFrame
	var data []string
	seen := false
	flush := func() {
		if seen {
			cur.data, cur.hasData = strings.Join(data, "\n"), data != nil
			frames = append(frames, cur)
		}
		cur, data, seen = sseFrame{}, nil, false
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			flush()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			cur.id, seen = value, true
		case "event":
			cur.event, seen = value, true
		case "data":
			data, seen = append(data, value), true
		}
	}
	flush()
	return frames
}

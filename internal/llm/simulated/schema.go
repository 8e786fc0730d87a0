package simulated

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/tidwall/gjson"
)

// This file writes JSON for the JSON Schema of a tool's input or a structured output, read
// in place with gjson: type, enum, const, properties (in order), required,
// additionalProperties: false, items, prefixItems, anyOf/oneOf (first non-null branch),
// allOf (merged), local $ref and common formats. Other constraints (pattern, minLength …)
// are ignored on purpose, so users can exercise output-validation failures.

// maxSchemaDepth bounds generation, which also stops $ref cycles.
const maxSchemaDepth = 12

// gen writes one JSON value for a schema, drawing strings from the conversation: tool-call
// arguments (args true: required properties only, compact, first enum value) or a
// structured final answer (every property, spaced so it streams in word-sized chunks, enum
// values chosen by hash).
type gen struct {
	b            []byte
	c            convo
	doc          gjson.Result // the schema document, for $ref
	args         bool
	comma, colon string // separators, spaced in answers so they stream in word-sized chunks

	prose     []string // the sentences of the prose reply, made on first use by a long-text field
	longCount int      // long-text fields written so far
}

// newGen returns a generator for the schema raw; a missing or malformed schema reads as
// one that says nothing.
func newGen(c convo, raw json.RawMessage, args bool) *gen {
	g := &gen{b: make([]byte, 0, 256), c: c, args: args, comma: ", ", colon: ": "}
	if args {
		g.comma, g.colon = ",", ":"
	}
	if gjson.ValidBytes(raw) {
		g.doc = gjson.ParseBytes(raw)
	}
	return g
}

// prop is one declared property.
type prop struct {
	name string
	node gjson.Result
}

// get returns the keyword key of the schema n, else of its allOf branches (depth first).
// An empty string, list or object counts as absent, except as a const.
func get(n gjson.Result, key string) (v gjson.Result) {
	if v = n.Get(key); v.Exists() && (key == "const" || v.Raw != "[]" && v.Raw != "{}" && v.Raw != `""`) {
		return v
	}
	v = gjson.Result{}
	n.Get("allOf").ForEach(func(_, b gjson.Result) bool {
		v = get(b, key)
		return !v.Exists()
	})
	return v
}

// members appends the properties of the schema n and of its allOf branches (depth first,
// once per name) and the names they require.
func members(n gjson.Result, props []prop, required []string) ([]prop, []string) {
	n.Get("properties").ForEach(func(name, p gjson.Result) bool {
		if !slices.ContainsFunc(props, func(q prop) bool { return q.name == name.Str }) {
			props = append(props, prop{name.Str, p})
		}
		return true
	})
	n.Get("required").ForEach(func(_, r gjson.Result) bool {
		required = append(required, r.String())
		return true
	})
	n.Get("allOf").ForEach(func(_, b gjson.Result) bool {
		props, required = members(b, props, required)
		return true
	})
	return props, required
}

// kind returns the first non-null type of the schema n ("null" when null is the only one),
// else "object" or "array" when it has properties or items, or "".
func kind(n gjson.Result) string {
	kind := "" // read without gjson's Array, which allocates (BenchmarkComplete/output_schema)
	get(n, "type").ForEach(func(_, t gjson.Result) bool {
		kind = t.Str
		return kind == "null"
	})
	switch {
	case kind != "":
		return kind
	case get(n, "properties").Exists() || get(n, "required").Exists():
		return "object"
	case get(n, "items").Exists() || get(n, "prefixItems").Exists():
		return "array"
	}
	return ""
}

// bare reports whether the schema n says nothing about its own shape (so a $ref or a
// branch does).
func bare(n gjson.Result) bool {
	return kind(n) == "" && !get(n, "const").Exists() && !get(n, "enum").Exists()
}

// lookup resolves a local $ref, a JSON pointer into the document ("#/$defs/point").
func (g *gen) lookup(ref string) gjson.Result {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return gjson.Result{} // in another document
	}
	n := g.doc
	for _, name := range strings.Split(path, "/")[1:] {
		n = n.Get(gjson.Escape(name))
	}
	return n
}

// resolve follows $ref and picks the first non-null anyOf/oneOf branch of a node that
// has no shape of its own.
func (g *gen) resolve(n gjson.Result) gjson.Result {
	for hops := 0; hops < maxSchemaDepth && bare(n); hops++ {
		branches := append(get(n, "anyOf").Array(), get(n, "oneOf").Array()...)
		switch ref := get(n, "$ref").Str; {
		case ref != "" && !g.lookup(ref).Exists(), ref == "" && len(branches) == 0:
			return n
		case ref != "":
			n = g.lookup(ref)
		default:
			k := slices.IndexFunc(branches, func(b gjson.Result) bool { return kind(b) != "null" })
			n = branches[max(k, 0)]
		}
	}
	return n
}

// root writes the whole document. A schema that says nothing reads as an object (which
// gets {"query": …} as arguments and {"answer": …} as an answer).
func (g *gen) root() []byte {
	if n := g.resolve(g.doc); bare(n) && get(n, "format").Str == "" {
		g.object(n, 0)
	} else {
		g.value(n, "", hintNone, 0, -1)
	}
	return g.b
}

// value writes a value for the resolved schema n of the property called name; idx is the
// position within an array, or -1.
func (g *gen) value(n gjson.Result, name string, hint nameHint, depth, idx int) {
	typ, enum, lo, hi := kind(n), get(n, "enum").Array(), get(n, "minimum"), get(n, "maximum")
	switch {
	case get(n, "const").Exists():
		g.b = append(g.b, compactJSON(get(n, "const").Raw)...)
	case len(enum) > 0 && g.args:
		g.b = append(g.b, compactJSON(enum[0].Raw)...)
	case len(enum) > 0:
		g.b = append(g.b, compactJSON(enum[g.c.pick(saltEnum^hashString(name)<<4, len(enum))].Raw)...)
	case typ == "object":
		g.object(n, depth)
	case typ == "array":
		g.array(n, name, hint, depth)
	case (typ == "integer" || typ == "number") && lo.Type == gjson.Number && hi.Type == gjson.Number && lo.Num <= hi.Num:
		// One of nine evenly spaced steps chosen by the text (rounded for integers), so a
		// judge gives the same case the same score, within its range.
		v := lo.Num + (hi.Num-lo.Num)*float64(g.c.pick(saltNumber^hashString(name)<<4, 9))/8
		if typ == "integer" {
			v = min(max(math.Round(v), math.Ceil(lo.Num)), math.Floor(hi.Num))
		}
		g.b = strconv.AppendFloat(g.b, v, 'g', -1, 64)
	case typ == "integer" || typ == "number":
		g.b = append(g.b, g.number(name, hint, typ == "integer")...)
	case typ == "boolean":
		g.b = append(g.b, "true"...)
	case typ == "null":
		g.b = append(g.b, "null"...)
	default:
		g.b = appendJSONString(g.b, g.text(name, hint, get(n, "format").Str, idx))
	}
}

// object writes an object: every declared property for an answer; for arguments the
// required ones, or when none are required the query-like ones or else the first.
func (g *gen) object(n gjson.Result, depth int) {
	g.b = append(g.b, '{')
	ps, req := members(n, nil, nil)
	count, open := 0, get(n, "additionalProperties").Raw != "false"
	member := func(name string, node gjson.Result) {
		if depth >= maxSchemaDepth {
			return
		}
		if count++; count > 1 {
			g.b = append(g.b, g.comma...)
		}
		g.b = appendJSONString(g.b, name)
		g.b = append(g.b, g.colon...)
		g.value(g.resolve(node), name, hintFor(name), depth+1, -1)
	}
	for _, p := range ps {
		if !g.args || slices.Contains(req, p.name) || len(req) == 0 && hintFor(p.name) == hintQuery {
			member(p.name, p.node)
		}
	}
	if count == 0 && len(req) == 0 && g.args && len(ps) > 0 {
		member(ps[0].name, ps[0].node)
	}
	for k, r := range req {
		if !slices.ContainsFunc(ps, func(p prop) bool { return p.name == r }) && !slices.Contains(req[:k], r) {
			member(r, gjson.Result{})
		}
	}
	if count == 0 && depth == 0 && open && g.args {
		member("query", gjson.Result{})
	} else if count == 0 && depth == 0 && open {
		member("answer", gjson.Result{})
	}
	g.b = append(g.b, '}')
}

// array writes the tuple items (draft 4–7 "items": [...], then "prefixItems"), else one
// item (arguments) or one to three (answers).
func (g *gen) array(n gjson.Result, name string, hint nameHint, depth int) {
	g.b = append(g.b, '[')
	items, prefix := get(n, "items"), get(n, "prefixItems").Array()
	switch {
	case items.IsArray():
		prefix = append(items.Array(), prefix...)
	case len(prefix) == 0 && g.args:
		prefix = []gjson.Result{items}
	case len(prefix) == 0:
		prefix = slices.Repeat([]gjson.Result{items}, 1+g.c.pick(saltArrayLen^hashString(name)<<4, 3))
	}
	for i, p := range prefix {
		if depth >= maxSchemaDepth {
			break
		}
		if i > 0 {
			g.b = append(g.b, g.comma...)
		}
		g.value(g.resolve(p), name, hint, depth+1, i)
	}
	g.b = append(g.b, ']')
}

// number returns a small deterministic number suited to the property's name.
func (g *gen) number(name string, hint nameHint, integer bool) string {
	p := g.c.pick(saltNumber^hashString(name)<<4, 9)
	switch {
	case hint == "score" && integer:
		return strconv.Itoa(6 + p%4)
	case hint == "score":
		return "0." + strconv.Itoa(55+5*p)
	case hint == "count" && g.args:
		return "5"
	case hint == "count":
		return strconv.Itoa(1 + p%5)
	case hint == "page":
		return "1"
	case hint == "year":
		return "2025"
	case hint == "money" && integer:
		return strconv.Itoa(10 * (p + 1))
	case hint == "money":
		return strconv.Itoa(10*(p+1)-1) + ".99"
	case !integer:
		return strconv.Itoa(1+p) + ".5"
	}
	return strconv.Itoa(1 + p)
}

// formatValues are the examples of string formats.
var formatValues = map[string]string{"date": "2025-06-15", "date-time": "2025-06-15T09:30:00Z", "time": "09:30:00Z",
	"duration": "PT1H", "email": "user@example.com", "idn-email": "user@example.com", "hostname": "example.com",
	"idn-hostname": "example.com", "ipv4": "192.0.2.10", "ipv6": "2001:db8::10", "json-pointer": "/data"}

// text returns a string suited to the property's format, name and conversation.
func (g *gen) text(name string, hint nameHint, format string, idx int) string {
	sal := g.c.sal.words
	if v, ok := formatValues[format]; ok {
		return v
	}
	switch format {
	case "uuid": // named by the conversation and the property
		return uuid.NewSHA1(uuid.Nil, strconv.AppendUint([]byte(name), g.c.h, 16)).String()
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		hint = "url"
	}
	switch {
	case hint == hintQuery || hint == hintLong && g.args:
		return cmp.Or(collapse(g.c.user, 200), g.c.topic, "general question")
	case hint == hintLong:
		return g.longText()
	case hint == "url":
		return "https://example.com/" + slug(g.c.topic, "page")
	case hint == "path": // a file name the user mentioned ("config.yaml"), else one after the topic
		for _, w := range sal {
			if t := w.text(g.c.user); strings.Contains(t, ".") { // only ever inside a word
				return t
			}
		}
		return "docs/" + slug(g.c.topic, "notes") + ".md"
	case hint == "id": // "user_id" → "user_1a2b3c4d"
		return slug(strings.TrimSuffix(strings.ToLower(name), "id"), "id") + "_" + hex8(mix(g.c.h^hashString(name)))
	case hint == "place": // the first capitalised salient word (a likely place name)
		for _, w := range sal {
			if isUpper(g.c.user[w.start]) && !sentenceInitial(g.c.user, w.start) {
				return w.text(g.c.user)
			}
		}
		idx = 0
	case hint == "sql": // a table named after the first salient word ("e-mail" → e_mail)
		table := ""
		if len(sal) > 0 {
			table = strings.ReplaceAll(slug(sal[0].text(g.c.user), ""), "-", "_")
		}
		return "SELECT * FROM " + cmp.Or(strings.TrimLeft(table, "0123456789_"), "records") + " LIMIT 10"
	case hint == "word":
		idx = max(idx, 0)
	}
	// The idx-th salient word (rotating); with idx -1 or no salient words the topic.
	if idx >= 0 && len(sal) > 0 {
		return g.c.word(sal[idx%len(sal)])
	}
	return cmp.Or(g.c.topic, name)
}

// longText is the prose reply for the first long-text field, then one of its sentences
// for each later one.
func (g *gen) longText() string {
	if g.prose == nil {
		g.prose = g.c.reply()
	}
	if g.longCount++; g.longCount == 1 || len(g.prose) == 1 {
		return strings.Join(g.prose, " ")
	}
	return g.prose[(g.longCount-1)%len(g.prose)]
}

// slug returns a URL-safe form of s ("Lisbon itinerary" → "lisbon-itinerary"), or
// fallback when s has no ASCII letter or digit.
func slug(s string, fallback string) string {
	out := strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r >= 0x80 || !isLower(byte(r)) && (r < '0' || r > '9')
	}), "-")
	if len(out) > 40 {
		out = out[:40+strings.Count(out[39:40], "-")] // never ending in a dash
	}
	return cmp.Or(out, fallback)
}

// hex8 returns the low eight hex digits of x.
func hex8(x uint64) string { return fmt.Sprintf("%08x", x&0xffffffff) }

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw string) string { return gjson.Get(raw, "@ugly").Raw }

// appendJSONString appends s as a JSON string: invalid UTF-8 becomes one U+FFFD, and
// HTML's <, > and & stay as they are. Plain text is quoted as it is, skipping the encoder
// (BenchmarkComplete/output_schema).
func appendJSONString(b []byte, s string) []byte {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == '"' || r == '\\' || r == 0x2028 || r == 0x2029 }) {
		return append(append(append(b, '"'), s...), '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// nameHint is what a property's name suggests about the value a person would put there:
// query, long (running prose), url, path, id, sql, word, place, score, count, page, year,
// money, or "".
type nameHint string

// Hints the code tells apart.
const hintNone, hintQuery, hintLong nameHint = "", "query", "long"

// hintWords map (lower-case) property names, and the words of names, to hints.
var hintWords = func() map[string]nameHint {
	m := map[string]nameHint{}
	for hint, names := range map[nameHint]string{
		hintQuery: "query q search search_query question prompt input search_term term terms request instruction task goal",
		hintLong: "summary answer response reply explanation reasoning description content text message body analysis " +
			"rationale details comment comments notes note result output feedback justification conclusion " +
			"recommendation advice reason overview abstract",
		"word":  "category tag tags type kind keyword keywords genre intent entity entities topics categories labels",
		"place": "city location place country region destination origin", "id": "id", "sql": "sql statement",
		"score": "confidence score probability likelihood relevance certainty accuracy weight",
		"count": "limit count max_results top_k k n num_results page_size size max num total quantity maxresults topk per_page",
		"money": "price amount cost budget", "page": "page", "year": "year",
		"url": "url uri link href website", "path": "path file filename folder dir directory",
		"": "name title subject topic headline label heading caption",
	} {
		for _, name := range strings.Fields(names) {
			m[name] = hint
		}
	}
	return m
}()

// hintFor classifies a property name by the whole of it ("query", "max_results"), else by
// its words from the last ("user_id", "fileName", "max_tokens", "image_url_list").
func hintFor(name string) nameHint {
	if h, ok := hintWords[strings.ToLower(name)]; ok {
		return h
	}
	parts := nameParts(name)
	for i := len(parts) - 1; i >= 0; i-- {
		if h, ok := hintWords[strings.ToLower(parts[i])]; ok {
			return h
		}
	}
	return hintNone
}

package simulated

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// This file writes JSON matching the JSON Schema of a tool's input or a structured output,
// reading the schema in place with gjson. It understands type (and type lists), enum,
// const, properties (in document order), required, additionalProperties: false, items,
// prefixItems, anyOf/oneOf (first non-null branch), allOf (merged), local $ref into
// $defs/definitions, and common string formats. Other constraints (pattern, minLength,
// minItems …) are deliberately ignored: the engine validates what the model returns, and a
// schema the simulation cannot satisfy is how users exercise output-validation failures.
// A number with both minimum and maximum is chosen between them.

// maxSchemaDepth bounds generation, which also stops $ref cycles.
const maxSchemaDepth = 12

// gen writes one JSON value for a schema, drawing strings from the conversation: tool-call
// arguments (args true: required properties only, compact, first enum value) or a
// structured final answer (every property, spaced so it streams in word-sized chunks, enum
// values chosen by hash).
type gen struct {
	b    []byte
	c    *convo
	doc  gjson.Result // the schema document, for $ref
	args bool

	prose     []string // the sentences of the prose reply, made on first use by a long-text field
	longCount int      // long-text fields written so far
}

// newGen returns a generator for the schema raw; a missing or malformed schema reads as
// one that says nothing.
func newGen(c *convo, raw json.RawMessage, args bool) *gen {
	g := &gen{b: make([]byte, 0, 256), c: c, args: args}
	if gjson.ValidBytes(raw) {
		g.doc = gjson.ParseBytes(raw)
	}
	return g
}

// kw returns keyword key of schema n or, when n has none, of the first allOf branch
// (depth first) that has it: allOf branches merge into the schema, its own keywords first.
// An empty string or list counts as none, except as a const.
func kw(n gjson.Result, key string) gjson.Result {
	var found gjson.Result
	allOf(n, func(s gjson.Result) {
		if v := s.Get(key); !found.Exists() && (key == "const" || v.Raw != "[]" && v.Raw != `""`) {
			found = v
		}
	})
	return found
}

// allOf calls f with n and each of its allOf branches, depth first.
func allOf(n gjson.Result, f func(gjson.Result)) {
	f(n)
	n.Get("allOf").ForEach(func(_, b gjson.Result) bool {
		allOf(b, f)
		return true
	})
}

// typeOf returns the first non-null type of n ("null" when null is the only one), or "".
func typeOf(n gjson.Result) string {
	t := kw(n, "type")
	if !t.IsArray() {
		return t.Str
	}
	typ := ""
	t.ForEach(func(_, v gjson.Result) bool {
		typ = v.Str
		return typ == "null"
	})
	return typ
}

// prop is one declared property.
type prop struct {
	name string
	node gjson.Result
}

// props returns the declared properties of n and its allOf branches, in document order.
func props(n gjson.Result) []prop {
	var ps []prop
	allOf(n, func(s gjson.Result) {
		s.Get("properties").ForEach(func(k, v gjson.Result) bool {
			if !slices.ContainsFunc(ps, func(p prop) bool { return p.name == k.Str }) {
				ps = append(ps, prop{k.Str, v})
			}
			return true
		})
	})
	return ps
}

// required returns the required property names of n and its allOf branches.
func required(n gjson.Result) []string {
	var names []string
	allOf(n, func(s gjson.Result) {
		for _, r := range s.Get("required").Array() {
			names = append(names, r.String())
		}
	})
	return names
}

// prefixItems returns the tuple items of n (draft 4–7 "items": [...], then "prefixItems").
func prefixItems(n gjson.Result) []gjson.Result {
	if items := kw(n, "items"); items.IsArray() {
		return append(items.Array(), n.Get("prefixItems").Array()...)
	}
	return kw(n, "prefixItems").Array()
}

// items returns the schema of every item of n, when they are not a tuple.
func items(n gjson.Result) gjson.Result {
	if items := kw(n, "items"); !items.IsArray() {
		return items
	}
	return gjson.Result{}
}

// bare reports whether n says nothing about its own shape (so a $ref or a branch does).
func bare(n gjson.Result) bool {
	return typeOf(n) == "" && len(props(n)) == 0 && len(required(n)) == 0 && !kw(n, "const").Exists() &&
		!kw(n, "enum").Exists() && !items(n).Exists() && len(prefixItems(n)) == 0
}

// lookup resolves a local $ref into the document's $defs or definitions.
func (g *gen) lookup(ref string) gjson.Result {
	if ref == "#" || ref == "" {
		return g.doc
	}
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			return g.doc.Get(prefix[2:len(prefix)-1] + "." + gjson.Escape(name))
		}
	}
	return gjson.Result{}
}

// resolve follows $ref and picks the first non-null anyOf/oneOf branch of a node that
// has no shape of its own.
func (g *gen) resolve(n gjson.Result) gjson.Result {
	for hops := 0; hops < maxSchemaDepth && bare(n); hops++ {
		if ref := kw(n, "$ref").Str; ref != "" {
			t := g.lookup(ref)
			if !t.Exists() {
				return n
			}
			n = t
			continue
		}
		branches := append(kw(n, "anyOf").Array(), kw(n, "oneOf").Array()...)
		if len(branches) == 0 {
			return n
		}
		n = branches[0]
		for _, a := range branches {
			r := a // follow the branch's $ref chain only, to see its type
			for k := 0; k < maxSchemaDepth && kw(r, "$ref").Str != "" && bare(r); k++ {
				r = g.lookup(kw(r, "$ref").Str)
			}
			if r.Exists() && typeOf(r) != "null" {
				n = a
				break
			}
		}
	}
	return n
}

// root writes the whole document. A schema that says nothing gets {"query": …} as
// arguments and {"answer": …} as an answer.
func (g *gen) root() []byte {
	n := g.resolve(g.doc)
	if bare(n) && !kw(n, "anyOf").Exists() && !kw(n, "oneOf").Exists() && kw(n, "$ref").Str == "" && kw(n, "format").Str == "" {
		if g.args {
			g.b = append(appendJSONString(append(g.b, `{"query":`...), truncateWords(strings.TrimSpace(g.c.user), 200)), '}')
		} else {
			g.b = append(appendJSONString(append(g.b, `{"answer": `...), g.longText()), '}')
		}
		return g.b
	}
	g.value(n, "", hintNone, 0, -1)
	return g.b
}

// sep appends the separator between members or items.
func (g *gen) sep() {
	if g.b = append(g.b, ','); !g.args {
		g.b = append(g.b, ' ')
	}
}

// value writes a value for node n of the property called name; idx is the position
// within an array, or -1.
func (g *gen) value(n gjson.Result, name string, hint nameHint, depth, idx int) {
	n = g.resolve(n)
	if c := kw(n, "const"); c.Exists() {
		g.b = append(g.b, compactJSON(c.Raw)...)
		return
	}
	if enum := kw(n, "enum").Array(); len(enum) > 0 {
		k := 0
		if !g.args {
			k = g.c.pick(saltEnum^hashString(name)<<4, len(enum))
		}
		g.b = append(g.b, compactJSON(enum[k].Raw)...)
		return
	}
	typ := typeOf(n)
	if typ == "" {
		switch {
		case len(props(n)) > 0 || len(required(n)) > 0:
			typ = "object"
		case items(n).Exists() || len(prefixItems(n)) > 0:
			typ = "array"
		}
	}
	lo, hi := n.Get("minimum"), n.Get("maximum")
	switch typ {
	case "object":
		g.object(n, depth)
	case "array":
		g.array(n, name, hint, depth)
	case "integer", "number":
		if lo.Type == gjson.Number && hi.Type == gjson.Number && lo.Num <= hi.Num {
			g.between(name, lo.Num, hi.Num, typ == "integer")
		} else {
			g.number(name, hint, typ == "integer")
		}
	case "boolean":
		g.b = append(g.b, "true"...)
	case "null":
		g.b = append(g.b, "null"...)
	default:
		g.str(name, hint, kw(n, "format").Str, idx)
	}
}

// object writes an object: every declared property for an answer; for arguments the
// required ones, or when none are required the query-like ones or else the first.
func (g *gen) object(n gjson.Result, depth int) {
	g.b = append(g.b, '{')
	ps, req, count, closed := props(n), required(n), 0, false
	allOf(n, func(s gjson.Result) { closed = closed || s.Get("additionalProperties").Raw == "false" })
	member := func(name string, node gjson.Result) {
		if depth >= maxSchemaDepth {
			return
		}
		if count > 0 {
			g.sep()
		}
		count++
		g.b = appendJSONString(g.b, name)
		if g.b = append(g.b, ':'); !g.args {
			g.b = append(g.b, ' ')
		}
		g.value(node, name, hintFor(name), depth+1, -1)
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
	if count == 0 && depth == 0 && !closed && !g.args {
		member("answer", gjson.Result{})
	}
	g.b = append(g.b, '}')
}

// array writes prefixItems, then one item (arguments) or one to three (answers).
func (g *gen) array(n gjson.Result, name string, hint nameHint, depth int) {
	g.b = append(g.b, '[')
	if depth < maxSchemaDepth {
		prefix, item := prefixItems(n), items(n)
		if len(prefix) == 0 {
			k := 1
			if !g.args {
				k += g.c.pick(saltArrayLen^hashString(name)<<4, 3)
			}
			for range k {
				prefix = append(prefix, item)
			}
		}
		for i, p := range prefix {
			if i > 0 {
				g.sep()
			}
			g.value(p, name, hint, depth+1, i)
		}
	}
	g.b = append(g.b, ']')
}

// number writes a small deterministic number suited to the property's name.
func (g *gen) number(name string, hint nameHint, integer bool) {
	p := g.c.pick(saltNumber^hashString(name)<<4, 9)
	v, frac := 1+p, ""
	switch {
	case hint == "score" && integer:
		v = 6 + p%4
	case hint == "score":
		g.b, v = append(g.b, "0."...), 55+5*p
	case hint == "count" && g.args:
		v = 5
	case hint == "count":
		v = 1 + p%5
	case hint == "page":
		v = 1
	case hint == "year":
		v = 2025
	case hint == "money" && integer:
		v = 10 * (p + 1)
	case hint == "money":
		v, frac = 10*(p+1)-1, ".99"
	case !integer:
		frac = ".5"
	}
	g.b = append(strconv.AppendInt(g.b, int64(v), 10), frac...)
}

// between writes a number from lo to hi chosen by the conversation: one of nine evenly spaced
// steps (rounded for integers), so the same text always gets the same number, and a judge's
// score stays within its range.
func (g *gen) between(name string, lo, hi float64, integer bool) {
	v := lo + (hi-lo)*float64(g.c.pick(saltNumber^hashString(name)<<4, 9))/8
	if integer {
		v = min(max(math.Round(v), math.Ceil(lo)), math.Floor(hi))
	}
	g.b = strconv.AppendFloat(g.b, v, 'g', -1, 64)
}

// formatValues are the fixed examples of string formats.
var formatValues = map[string]string{"date": `"2025-06-15"`, "date-time": `"2025-06-15T09:30:00Z"`,
	"time": `"09:30:00Z"`, "duration": `"PT1H"`, "email": `"user@example.com"`, "idn-email": `"user@example.com"`,
	"hostname": `"example.com"`, "idn-hostname": `"example.com"`, "ipv4": `"192.0.2.10"`, "ipv6": `"2001:db8::10"`,
	"json-pointer": `"/data"`}

// str writes a string suited to the property's format, name and conversation.
func (g *gen) str(name string, hint nameHint, format string, idx int) {
	if v, ok := formatValues[format]; ok {
		g.b = append(g.b, v...)
		return
	}
	switch format {
	case "uuid":
		g.uuid(name)
		return
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		hint = "url"
	}
	if strings.HasPrefix(string(hint), `"`) {
		g.b = append(g.b, hint...)
		return
	}
	switch {
	case hint == hintQuery || hint == hintLong && g.args:
		g.b = appendJSONString(g.b, g.userText())
	case hint == hintLong:
		g.b = appendJSONString(g.b, g.longText())
	case hint == "url":
		g.b = append(appendSlug(append(g.b, `"https://example.com/`...), g.c.topic(), "page"), '"')
	case hint == "path":
		g.path()
	case hint == "id":
		prefix := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_id"), "Id"), "ID")
		g.b = appendSlug(append(g.b, '"'), prefix, "id")
		g.b = append(appendHex(append(g.b, '_'), mix(g.c.h^hashString(name)), 8), '"')
	case hint == "place":
		g.place(name)
	case hint == "sql":
		g.b = append(g.ident(append(g.b, `"SELECT * FROM `...)), ` LIMIT 10"`...)
	case hint == "word":
		g.word(name, max(idx, 0))
	default:
		g.word(name, idx)
	}
}

// userText is the user's message, trimmed and bounded, for query-like arguments.
func (g *gen) userText() string {
	if t := truncateWords(strings.TrimSpace(g.c.user), 200); t != "" {
		return t
	}
	if t := g.c.topic(); t != "" {
		return t
	}
	return "general question"
}

// longText is the prose reply, or one of its sentences for the second and later
// long-text fields.
func (g *gen) longText() string {
	if g.prose == nil {
		g.prose = g.c.reply()
	}
	k := g.longCount
	if g.longCount++; k == 0 || len(g.prose) == 1 {
		return strings.Join(g.prose, " ")
	}
	return strings.TrimSpace(g.prose[k%len(g.prose)])
}

// word writes the idx-th salient word (rotating); with idx -1 or no salient words the
// topic, or else the property name.
func (g *gen) word(name string, idx int) {
	switch {
	case idx >= 0 && len(g.c.sal.words) > 0:
		g.b = appendJSONString(g.b, g.c.word(g.c.sal.words[idx%len(g.c.sal.words)]))
	case g.c.topic() != "":
		g.b = appendJSONString(g.b, g.c.topic())
	default:
		g.b = appendJSONString(g.b, name)
	}
}

// place writes the first capitalised salient word (a likely place name), else the first
// salient word.
func (g *gen) place(name string) {
	for _, w := range g.c.sal.words {
		if isUpper(g.c.user[w.start]) && !sentenceInitial(g.c.user, w.start) {
			g.b = appendJSONString(g.b, w.text(g.c.user))
			return
		}
	}
	g.word(name, 0)
}

// path writes a file name the user mentioned ("config.yaml"), else one named after the
// topic.
func (g *gen) path() {
	for _, w := range g.c.sal.words {
		if t := w.text(g.c.user); strings.LastIndexByte(t, '.') > 0 && strings.LastIndexByte(t, '.') < len(t)-1 {
			g.b = appendJSONString(g.b, t)
			return
		}
	}
	g.b = append(appendSlug(append(g.b, `"docs/`...), g.c.topic(), "notes"), `.md"`...)
}

// ident appends a SQL-safe table name from the first salient word.
func (g *gen) ident(b []byte) []byte {
	start := len(b)
	if len(g.c.sal.words) > 0 {
		w := g.c.sal.words[0].text(g.c.user)
		for _, c := range []byte(w[:min(len(w), 30)]) {
			switch {
			case isUpper(c):
				b = append(b, c+'a'-'A')
			case isLower(c) || c == '_' || c >= '0' && c <= '9' && len(b) > start:
				b = append(b, c)
			}
		}
	}
	if len(b) == start {
		b = append(b, "records"...)
	}
	return b
}

// uuid writes a version-4-shaped UUID derived from the conversation.
func (g *gen) uuid(name string) {
	x, y := mix(g.c.h^hashString(name)), mix(g.c.h^hashString(name)^0x5555)
	b := append(appendHex(append(g.b, '"'), x>>32, 8), '-')
	b = append(appendHex(b, x>>16, 4), '-', '4')
	b = append(appendHex(b, x, 3), '-', "89ab"[y>>62])
	b = append(appendHex(b, y>>48, 3), '-')
	g.b = append(appendHex(b, y, 12), '"')
}

// appendSlug appends a URL-safe form of s ("Lisbon itinerary" → "lisbon-itinerary").
func appendSlug(b []byte, s string, fallback string) []byte {
	start, dash := len(b), false
	for i := 0; i < len(s) && len(b)-start < 40; i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if !isLower(c) && (c < '0' || c > '9') {
			dash = true
			continue
		}
		if dash && len(b) > start {
			b = append(b, '-')
		}
		b, dash = append(b, c), false
	}
	if len(b) == start {
		b = append(b, fallback...)
	}
	return b
}

// appendHex appends the low digits hex digits of x.
func appendHex(b []byte, x uint64, digits int) []byte {
	for i := digits - 1; i >= 0; i-- {
		b = append(b, "0123456789abcdef"[(x>>(4*uint(i)))&0xF])
	}
	return b
}

// truncateWords cuts s at a space before max bytes.
func truncateWords(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if i := strings.LastIndexByte(s[:max], ' '); i > 0 {
		return s[:i]
	}
	return s[:max]
}

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(raw)); err != nil {
		return "null"
	}
	return b.String()
}

// appendJSONString appends s as a JSON string literal; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// nameHint is what a property's name suggests about the value a person would put there: a
// kind (query, long for running prose, url, path, id, word, place, sql, score, count,
// page, year, money), a fixed JSON value (`"en"` for a language), or "" for nothing.
type nameHint string

// hintWords maps exact (lower-case) property names to hints.
var hintWords = func() map[string]nameHint {
	m := map[string]nameHint{}
	for hint, names := range map[nameHint]string{
		hintQuery: "query q search search_query question prompt input search_term term terms request instruction task goal",
		hintLong: "summary answer response reply explanation reasoning description content text message body analysis " +
			"rationale details comment comments notes note result output feedback justification conclusion " +
			"recommendation advice reason overview abstract",
		"word":                   "category tag tags type kind keyword keywords genre intent entity entities topics categories labels",
		`"en"`:                   "language lang locale",
		"place":                  "city location place country region destination origin",
		`"2025-06-15"`:           "day deadline since until birthday",
		`"2025-06-15T09:30:00Z"`: "timestamp time datetime when",
		"sql":                    "sql statement",
		`"USD"`:                  "currency",
		`"UTC"`:                  "timezone tz",
		"score":                  "confidence score probability likelihood relevance certainty accuracy weight",
		"count":                  "limit count max_results top_k k n num_results page_size size max total quantity maxresults topk per_page",
		"page":                   "page", "year": "year", "money": "price amount cost budget",
		"": "name title subject topic headline label heading caption",
	} {
		for _, name := range strings.Fields(names) {
			m[name] = hint
		}
	}
	return m
}()

// Hints the code tells apart.
const (
	hintNone  nameHint = ""
	hintQuery nameHint = "query"
	hintLong  nameHint = "long"
)

// hintFor classifies a property name: exact names first, then telling fragments
// ("user_email", "fileName", "created_at").
func hintFor(name string) nameHint {
	lower := strings.ToLower(name)
	if h, ok := hintWords[lower]; ok {
		return h
	}
	has := func(parts ...string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(lower, p) })
	}
	ends := func(s string, parts ...string) bool {
		return slices.ContainsFunc(parts, func(p string) bool { return strings.HasSuffix(s, p) })
	}
	switch {
	case has("url", "uri", "link", "href", "website"):
		return "url"
	case has("email"):
		return `"user@example.com"`
	case has("path", "file", "folder") || ends(lower, "dir"):
		return "path"
	case has("sql"):
		return "sql"
	case has("phone"):
		return `"+1-555-0100"`
	case has("timezone"):
		return `"UTC"`
	case ends(lower, "_at") || has("timestamp") || ends(name, "At"):
		return `"2025-06-15T09:30:00Z"`
	case has("date"):
		return `"2025-06-15"`
	case lower == "id" || ends(lower, "_id") || ends(name, "Id", "ID"):
		return "id"
	case ends(lower, "_name", "_title") || ends(name, "Name"):
		return hintNone
	case ends(lower, "query", "question"):
		return hintQuery
	case ends(lower, "summary", "description", "answer"):
		return hintLong
	case strings.HasPrefix(lower, "max_") || strings.HasPrefix(lower, "num_") || ends(lower, "_count", "_limit"):
		return "count"
	case ends(lower, "_score", "confidence"):
		return "score"
	}
	return hintNone
}

package simulated

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// gen writes one JSON value for a compiled schema, drawing strings from the
// conversation: tool-call arguments (args true: required properties only, compact, first
// enum value) or a structured final answer (every property, spaced so it streams in
// word-sized chunks, enum values chosen by hash).
type gen struct {
	b    []byte
	c    *convo
	cs   *compiledSchema
	args bool

	prose     string // the prose reply, made on first use by a long-text field
	ends      [maxSentences]int
	nSent     int
	longCount int // long-text fields written so far
}

// lookup resolves a local $ref.
func (cs *compiledSchema) lookup(ref string) *schemaNode {
	if ref == "#" || ref == "" {
		return cs.root
	}
	return cs.defs[ref]
}

// bare reports whether n says nothing about its own shape (so a $ref or a branch does).
func (n *schemaNode) bare() bool {
	return n.typ == "" && len(n.props) == 0 && len(n.required) == 0 && !n.hasConst && len(n.enum) == 0 &&
		n.items == nil && len(n.prefix) == 0
}

// resolve follows $ref and picks the first non-null anyOf/oneOf branch of a node that
// has no shape of its own.
func (g *gen) resolve(n *schemaNode) *schemaNode {
	for hops := 0; n != nil && hops < maxSchemaDepth && n.bare(); hops++ {
		switch {
		case n.ref != "":
			t := g.cs.lookup(n.ref)
			if t == nil || t == n {
				return n
			}
			n = t
		case len(n.alts) > 0:
			next := n.alts[0]
			for _, a := range n.alts {
				if r := g.resolveShallow(a); r != nil && r.typ != "null" {
					next = a
					break
				}
			}
			n = next
		default:
			return n
		}
	}
	return n
}

// resolveShallow follows a node's $ref chain only, to see a branch's type.
func (g *gen) resolveShallow(n *schemaNode) *schemaNode {
	for hops := 0; n != nil && n.ref != "" && n.bare() && hops < maxSchemaDepth; hops++ {
		n = g.cs.lookup(n.ref)
	}
	return n
}

// root writes the whole document for the schema. A schema that says nothing gets
// {"query": …} as arguments and {"answer": …} as an answer.
func (g *gen) root() {
	n := g.resolve(g.cs.root)
	if n == nil || n.bare() && len(n.alts) == 0 && n.ref == "" && n.format == "" {
		g.b = append(g.b, '{')
		if g.args {
			g.b = appendJSONString(g.b, "query")
			g.b = append(g.b, ':')
			g.b = appendJSONString(g.b, truncateWords(strings.TrimSpace(g.c.user), 200))
		} else {
			g.b = appendJSONString(g.b, "answer")
			g.b = append(g.b, ": "...)
			g.b = appendJSONString(g.b, g.longText())
		}
		g.b = append(g.b, '}')
		return
	}
	g.value(n, "", hintNone, 0, -1)
}

// sep appends the separator between members or items.
func (g *gen) sep() {
	if g.args {
		g.b = append(g.b, ',')
	} else {
		g.b = append(g.b, ", "...)
	}
}

// key appends an object key and its colon.
func (g *gen) key(name string) {
	g.b = appendJSONString(g.b, name)
	if g.args {
		g.b = append(g.b, ':')
	} else {
		g.b = append(g.b, ": "...)
	}
}

// value writes a value for node n of the property called name; idx is the position
// within an array, or -1.
func (g *gen) value(n *schemaNode, name string, hint nameHint, depth, idx int) {
	n = g.resolve(n)
	if n == nil {
		g.str(name, hint, "", idx)
		return
	}
	if n.hasConst {
		g.b = append(g.b, n.cnst...)
		return
	}
	if len(n.enum) > 0 {
		if g.args {
			g.b = append(g.b, n.enum[0]...)
		} else {
			g.b = append(g.b, n.enum[g.c.pick(saltEnum^hashString(name)<<4, len(n.enum))]...)
		}
		return
	}
	typ := n.typ
	if typ == "" {
		switch {
		case len(n.props) > 0 || len(n.required) > 0:
			typ = "object"
		case n.items != nil || len(n.prefix) > 0:
			typ = "array"
		default:
			typ = "string"
		}
	}
	switch typ {
	case "object":
		g.object(n, depth)
	case "array":
		g.array(n, name, hint, depth)
	case "integer", "number":
		if n.min != nil && n.max != nil && *n.min <= *n.max {
			g.between(name, *n.min, *n.max, typ == "integer")
		} else {
			g.number(name, hint, typ == "integer")
		}
	case "boolean":
		g.b = append(g.b, "true"...)
	case "null":
		g.b = append(g.b, "null"...)
	default:
		g.str(name, hint, n.format, idx)
	}
}

// object writes an object: every declared property for an answer; for arguments the
// required ones, or when none are required the query-like ones or else the first.
func (g *gen) object(n *schemaNode, depth int) {
	g.b = append(g.b, '{')
	if depth >= maxSchemaDepth {
		g.b = append(g.b, '}')
		return
	}
	count := 0
	member := func(name string, node *schemaNode, hint nameHint) {
		if count > 0 {
			g.sep()
		}
		count++
		g.key(name)
		g.value(node, name, hint, depth+1, -1)
	}
	required := func(name string) bool {
		for _, r := range n.required {
			if r == name {
				return true
			}
		}
		return false
	}
	switch {
	case !g.args:
		for i := range n.props {
			member(n.props[i].name, n.props[i].node, n.props[i].hint)
		}
	case len(n.required) > 0:
		for i := range n.props {
			if required(n.props[i].name) {
				member(n.props[i].name, n.props[i].node, n.props[i].hint)
			}
		}
	default:
		for i := range n.props {
			if n.props[i].hint == hintQuery {
				member(n.props[i].name, n.props[i].node, n.props[i].hint)
			}
		}
		if count == 0 && len(n.props) > 0 {
			member(n.props[0].name, n.props[0].node, n.props[0].hint)
		}
	}
	for k, r := range n.required {
		if n.prop(r) == nil && !slices.Contains(n.required[:k], r) {
			member(r, nil, hintFor(r))
		}
	}
	if count == 0 && depth == 0 && !n.closed && !g.args {
		member("answer", nil, hintLong)
	}
	g.b = append(g.b, '}')
}

// array writes prefixItems, then one item (arguments) or one to three (answers).
func (g *gen) array(n *schemaNode, name string, hint nameHint, depth int) {
	g.b = append(g.b, '[')
	if depth >= maxSchemaDepth {
		g.b = append(g.b, ']')
		return
	}
	count := 0
	for _, p := range n.prefix {
		if count > 0 {
			g.sep()
		}
		g.value(p, name, hint, depth+1, count)
		count++
	}
	if len(n.prefix) == 0 {
		items := 1
		if !g.args {
			items = 1 + g.c.pick(saltArrayLen^hashString(name)<<4, 3)
		}
		for k := 0; k < items; k++ {
			if count > 0 {
				g.sep()
			}
			g.value(n.items, name, hint, depth+1, count)
			count++
		}
	}
	g.b = append(g.b, ']')
}

// number writes a small deterministic number suited to the property's name.
func (g *gen) number(name string, hint nameHint, integer bool) {
	p := g.c.pick(saltNumber^hashString(name)<<4, 9)
	switch hint {
	case hintScore:
		if integer {
			g.b = strconv.AppendInt(g.b, int64(6+p%4), 10)
		} else {
			g.b = append(g.b, "0."...)
			g.b = strconv.AppendInt(g.b, int64(55+5*p), 10)
		}
	case hintCount:
		if g.args {
			g.b = append(g.b, '5')
		} else {
			g.b = strconv.AppendInt(g.b, int64(1+p%5), 10)
		}
	case hintPage:
		g.b = append(g.b, '1')
	case hintYear:
		g.b = append(g.b, "2025"...)
	case hintMoney:
		if integer {
			g.b = strconv.AppendInt(g.b, int64(10*(p+1)), 10)
		} else {
			g.b = strconv.AppendInt(g.b, int64(10*(p+1)-1), 10)
			g.b = append(g.b, ".99"...)
		}
	default:
		g.b = strconv.AppendInt(g.b, int64(1+p), 10)
		if !integer {
			g.b = append(g.b, ".5"...)
		}
	}
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

// str writes a string suited to the property's format, name and conversation.
func (g *gen) str(name string, hint nameHint, format string, idx int) {
	switch format {
	case "date":
		g.b = append(g.b, `"2025-06-15"`...)
		return
	case "date-time":
		g.b = append(g.b, `"2025-06-15T09:30:00Z"`...)
		return
	case "time":
		g.b = append(g.b, `"09:30:00Z"`...)
		return
	case "duration":
		g.b = append(g.b, `"PT1H"`...)
		return
	case "email", "idn-email":
		g.b = append(g.b, `"user@example.com"`...)
		return
	case "hostname", "idn-hostname":
		g.b = append(g.b, `"example.com"`...)
		return
	case "ipv4":
		g.b = append(g.b, `"192.0.2.10"`...)
		return
	case "ipv6":
		g.b = append(g.b, `"2001:db8::10"`...)
		return
	case "uuid":
		g.uuid(name)
		return
	case "uri", "iri", "uri-reference", "iri-reference", "url":
		g.url()
		return
	case "json-pointer":
		g.b = append(g.b, `"/data"`...)
		return
	}
	switch hint {
	case hintQuery:
		g.quoted(g.userText())
	case hintLong:
		if g.args {
			g.quoted(g.userText())
		} else {
			g.quoted(g.longText())
		}
	case hintURL:
		g.url()
	case hintEmail:
		g.b = append(g.b, `"user@example.com"`...)
	case hintPath:
		g.path()
	case hintID:
		g.id(name)
	case hintLanguage:
		g.b = append(g.b, `"en"`...)
	case hintPlace:
		g.place(name)
	case hintDate:
		g.b = append(g.b, `"2025-06-15"`...)
	case hintDateTime:
		g.b = append(g.b, `"2025-06-15T09:30:00Z"`...)
	case hintSQL:
		g.b = append(g.b, `"SELECT * FROM `...)
		g.ident()
		g.b = append(g.b, ` LIMIT 10"`...)
	case hintPhone:
		g.b = append(g.b, `"+1-555-0100"`...)
	case hintCurrency:
		g.b = append(g.b, `"USD"`...)
	case hintTimezone:
		g.b = append(g.b, `"UTC"`...)
	case hintWord:
		g.word(name, idx)
	default:
		if idx >= 0 && g.c.sal.n > 0 {
			g.word(name, idx)
			return
		}
		if t := g.c.topic(); t != "" {
			g.quoted(t)
			return
		}
		g.quoted(name)
	}
}

// quoted appends s as a JSON string.
func (g *gen) quoted(s string) { g.b = appendJSONString(g.b, s) }

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
	if g.prose == "" {
		b, n := g.c.appendReply(make([]byte, 0, 256), g.ends[:])
		g.prose, g.nSent = string(b), n
	}
	k := g.longCount
	g.longCount++
	if k == 0 || g.nSent <= 1 {
		return g.prose
	}
	j := k % g.nSent
	start := 0
	if j > 0 {
		start = g.ends[j-1]
	}
	return strings.TrimSpace(g.prose[start:g.ends[j]])
}

// word writes the idx-th salient word (rotating), the topic, or the property name.
func (g *gen) word(name string, idx int) {
	if g.c.sal.n == 0 {
		if t := g.c.topic(); t != "" {
			g.quoted(t)
		} else {
			g.quoted(name)
		}
		return
	}
	var wb [64]byte
	k := max(idx, 0) % g.c.sal.n
	g.quoted(string(appendWord(wb[:0], g.c.user, g.c.sal.words[k])))
}

// place writes the first capitalised salient word (a likely place name), else the topic.
func (g *gen) place(name string) {
	for k := 0; k < g.c.sal.n; k++ {
		w := g.c.sal.words[k]
		if isUpper(g.c.user[w.start]) && !sentenceInitial(g.c.user, w.start) {
			g.quoted(w.text(g.c.user))
			return
		}
	}
	g.word(name, 0)
}

// appendSlug appends a URL-safe form of s ("Lisbon itinerary" → "lisbon-itinerary").
func appendSlug(b []byte, s string, fallback string) []byte {
	start := len(b)
	dash := false
	for i := 0; i < len(s) && len(b)-start < 40; i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			if dash && len(b) > start {
				b = append(b, '-')
			}
			dash = false
			b = append(b, c)
		default:
			dash = true
		}
	}
	if len(b) == start {
		b = append(b, fallback...)
	}
	return b
}

// url writes an example.com address named after the topic.
func (g *gen) url() {
	g.b = append(g.b, `"https://example.com/`...)
	g.b = appendSlug(g.b, g.c.topic(), "page")
	g.b = append(g.b, '"')
}

// path writes a file name the user mentioned ("config.yaml"), else one named after the
// topic.
func (g *gen) path() {
	for k := 0; k < g.c.sal.n; k++ {
		w := g.c.sal.words[k].text(g.c.user)
		if dot := strings.LastIndexByte(w, '.'); dot > 0 && dot < len(w)-1 {
			g.quoted(w)
			return
		}
	}
	g.b = append(g.b, `"docs/`...)
	g.b = appendSlug(g.b, g.c.topic(), "notes")
	g.b = append(g.b, `.md"`...)
}

// ident writes a SQL-safe table name from the first salient word.
func (g *gen) ident() {
	start := len(g.b)
	if g.c.sal.n > 0 {
		w := g.c.sal.words[0].text(g.c.user)
		for i := 0; i < len(w) && i < 30; i++ {
			c := w[i]
			switch {
			case c >= 'A' && c <= 'Z':
				g.b = append(g.b, c+'a'-'A')
			case c >= 'a' && c <= 'z' || c == '_' || c >= '0' && c <= '9' && len(g.b) > start:
				g.b = append(g.b, c)
			}
		}
	}
	if len(g.b) == start {
		g.b = append(g.b, "records"...)
	}
}

// id writes an identifier prefixed by the property's noun ("user_id" → "user_1a2b3c4d").
func (g *gen) id(name string) {
	prefix := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_id"), "Id"), "ID")
	g.b = append(g.b, '"')
	g.b = appendSlug(g.b, prefix, "id")
	g.b = append(g.b, '_')
	g.b = appendHex(g.b, mix(g.c.h^hashString(name)), 8)
	g.b = append(g.b, '"')
}

// uuid writes a version-4-shaped UUID derived from the conversation.
func (g *gen) uuid(name string) {
	x, y := mix(g.c.h^hashString(name)), mix(g.c.h^hashString(name)^0x5555)
	g.b = append(g.b, '"')
	g.b = appendHex(g.b, x>>32, 8)
	g.b = append(g.b, '-')
	g.b = appendHex(g.b, x>>16, 4)
	g.b = append(g.b, '-', '4')
	g.b = appendHex(g.b, x, 3)
	g.b = append(g.b, '-', "89ab"[y>>62])
	g.b = appendHex(g.b, y>>48, 3)
	g.b = append(g.b, '-')
	g.b = appendHex(g.b, y, 12)
	g.b = append(g.b, '"')
}

// appendHex appends the low digits hex digits of x.
func appendHex(b []byte, x uint64, digits int) []byte {
	const hex = "0123456789abcdef"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hex[(x>>(4*uint(i)))&0xF])
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

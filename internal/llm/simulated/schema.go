package simulated

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// This file compiles the JSON Schemas of tool inputs and structured outputs into a small
// tree the simulated provider walks to write matching JSON. It understands type (and
// type lists), enum, const, properties (in document order), required,
// additionalProperties: false, items, prefixItems, anyOf/oneOf (first non-null branch),
// allOf (merged), local $ref into $defs/definitions, and common string formats. Other
// constraints (minimum, maximum, pattern, minLength, minItems, uniqueItems …) are
// deliberately ignored: the engine validates what the model returns, and a schema the
// simulation cannot satisfy is how users exercise output-validation failures.

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	typ      string // object, array, string, integer, number, boolean, null, or "" when unstated
	format   string
	min, max *float64 // minimum and maximum, when both are stated a number is chosen between them
	enum     []string // compact JSON texts
	cnst     string   // compact JSON text, valid when hasConst
	hasConst bool
	props    []schemaProp
	required []string
	closed   bool // additionalProperties: false
	items    *schemaNode
	prefix   []*schemaNode
	ref      string
	alts     []*schemaNode // anyOf / oneOf branches
}

// schemaProp is one declared property, with what its name suggests about its value.
type schemaProp struct {
	name string
	node *schemaNode
	hint nameHint
}

// compiledSchema is a compiled schema document with its named definitions.
type compiledSchema struct {
	root *schemaNode
	defs map[string]*schemaNode // "#/$defs/x" and "#/definitions/x"
}

// maxSchemaDepth bounds both compilation and generation, which also stops $ref cycles.
const maxSchemaDepth = 12

// rawSchema is the subset of JSON Schema keywords the generator understands.
type rawSchema struct {
	Type                 json.RawMessage            `json:"type"`
	Format               string                     `json:"format"`
	Minimum              *float64                   `json:"minimum"`
	Maximum              *float64                   `json:"maximum"`
	Enum                 []json.RawMessage          `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	Properties           json.RawMessage            `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Items                json.RawMessage            `json:"items"`
	PrefixItems          []json.RawMessage          `json:"prefixItems"`
	Ref                  string                     `json:"$ref"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	AllOf                []json.RawMessage          `json:"allOf"`
	Defs                 map[string]json.RawMessage `json:"$defs"`
	Definitions          map[string]json.RawMessage `json:"definitions"`
}

// compileSchema compiles a schema document.
func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	cs := &compiledSchema{defs: map[string]*schemaNode{}}
	root, err := cs.node(raw, 0)
	if err != nil {
		return nil, err
	}
	cs.root = root
	return cs, nil
}

// node compiles one (sub)schema; boolean schemas compile to an empty node.
func (cs *compiledSchema) node(raw json.RawMessage, depth int) (*schemaNode, error) {
	n := &schemaNode{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || depth > maxSchemaDepth {
		if len(raw) > 0 && raw[0] != '{' && raw[0] != 't' && raw[0] != 'f' {
			return nil, errors.New("schema is not an object or boolean")
		}
		return n, nil
	}
	var r rawSchema
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	for _, defs := range [...]struct {
		prefix string
		m      map[string]json.RawMessage
	}{{"#/$defs/", r.Defs}, {"#/definitions/", r.Definitions}} {
		for name, d := range defs.m {
			dn, err := cs.node(d, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s%s: %w", defs.prefix, name, err)
			}
			cs.defs[defs.prefix+name] = dn
		}
	}
	n.typ = firstType(r.Type)
	n.format = r.Format
	n.min, n.max = r.Minimum, r.Maximum
	n.ref = r.Ref
	if r.Const != nil {
		n.hasConst = true
		n.cnst = compactJSON(r.Const)
	}
	for _, e := range r.Enum {
		n.enum = append(n.enum, compactJSON(e))
	}
	n.required = r.Required
	n.closed = string(bytes.TrimSpace(r.AdditionalProperties)) == "false"
	if len(r.Properties) > 0 {
		if err := cs.properties(n, r.Properties, depth); err != nil {
			return nil, err
		}
	}
	if items := bytes.TrimSpace(r.Items); len(items) > 0 {
		if items[0] == '[' { // draft 4–7 tuple form
			var tuple []json.RawMessage
			if err := json.Unmarshal(items, &tuple); err != nil {
				return nil, fmt.Errorf("decode items: %w", err)
			}
			r.PrefixItems = append(tuple, r.PrefixItems...)
		} else {
			var err error
			if n.items, err = cs.node(items, depth+1); err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
		}
	}
	for _, p := range r.PrefixItems {
		pn, err := cs.node(p, depth+1)
		if err != nil {
			return nil, fmt.Errorf("prefixItems: %w", err)
		}
		n.prefix = append(n.prefix, pn)
	}
	for _, alt := range append(r.AnyOf, r.OneOf...) {
		an, err := cs.node(alt, depth+1)
		if err != nil {
			return nil, fmt.Errorf("anyOf/oneOf: %w", err)
		}
		n.alts = append(n.alts, an)
	}
	for _, sub := range r.AllOf {
		sn, err := cs.node(sub, depth+1)
		if err != nil {
			return nil, fmt.Errorf("allOf: %w", err)
		}
		n.merge(sn)
	}
	return n, nil
}

// properties compiles a properties object, keeping the document's key order so
// generated objects read the way the schema author wrote them.
func (cs *compiledSchema) properties(n *schemaNode, raw json.RawMessage, depth int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("properties is not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("decode properties: %w", err)
		}
		name, _ := tok.(string)
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return fmt.Errorf("decode property %q: %w", name, err)
		}
		pn, err := cs.node(sub, depth+1)
		if err != nil {
			return fmt.Errorf("property %q: %w", name, err)
		}
		n.props = append(n.props, schemaProp{name: name, node: pn, hint: hintFor(name)})
	}
	return nil
}

// merge folds an allOf branch into n.
func (n *schemaNode) merge(o *schemaNode) {
	if n.typ == "" {
		n.typ = o.typ
	}
	if n.format == "" {
		n.format = o.format
	}
	if !n.hasConst && o.hasConst {
		n.hasConst, n.cnst = true, o.cnst
	}
	if len(n.enum) == 0 {
		n.enum = o.enum
	}
	for _, p := range o.props {
		if n.prop(p.name) == nil {
			n.props = append(n.props, p)
		}
	}
	n.required = append(n.required, o.required...)
	n.closed = n.closed || o.closed
	if n.items == nil {
		n.items = o.items
	}
	if len(n.prefix) == 0 {
		n.prefix = o.prefix
	}
	if n.ref == "" {
		n.ref = o.ref
	}
	if len(n.alts) == 0 {
		n.alts = o.alts
	}
}

// prop returns the declared property called name, or nil.
func (n *schemaNode) prop(name string) *schemaProp {
	for i := range n.props {
		if n.props[i].name == name {
			return &n.props[i]
		}
	}
	return nil
}

// firstType returns the first non-null type of a "type" keyword, or "null" when null is
// the only one.
func firstType(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var t string
		_ = json.Unmarshal(raw, &t)
		return t
	}
	var ts []string
	_ = json.Unmarshal(raw, &ts)
	for _, t := range ts {
		if t != "null" {
			return t
		}
	}
	if len(ts) > 0 {
		return "null"
	}
	return ""
}

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "null"
	}
	return b.String()
}

// nameHint is what a property's name suggests about the value a person would put there.
type nameHint uint8

const (
	hintNone     nameHint = iota
	hintQuery             // query, q, question: the user's request itself
	hintLong              // summary, answer, description: running prose
	hintURL               // url, link
	hintEmail             // email
	hintPath              // path, file
	hintID                // id, user_id
	hintTitle             // name, title, topic: a short phrase
	hintWord              // category, tag, type: one word
	hintLanguage          // language, locale
	hintPlace             // city, location
	hintDate              // date, deadline
	hintDateTime          // created_at, timestamp
	hintSQL               // sql
	hintPhone             // phone
	hintCurrency          // currency
	hintTimezone          // timezone
	hintScore             // confidence, score: a fraction
	hintCount             // limit, count, top_k: a small count
	hintPage              // page
	hintYear              // year
	hintMoney             // price, amount
)

// hintWords maps exact (lower-case) property names to hints.
var hintWords = map[string]nameHint{
	"query": hintQuery, "q": hintQuery, "search": hintQuery, "search_query": hintQuery, "question": hintQuery,
	"prompt": hintQuery, "input": hintQuery, "search_term": hintQuery, "term": hintQuery, "terms": hintQuery,
	"request": hintQuery, "instruction": hintQuery, "task": hintQuery, "goal": hintQuery,
	"summary": hintLong, "answer": hintLong, "response": hintLong, "reply": hintLong, "explanation": hintLong,
	"reasoning": hintLong, "description": hintLong, "content": hintLong, "text": hintLong, "message": hintLong,
	"body": hintLong, "analysis": hintLong, "rationale": hintLong, "details": hintLong, "comment": hintLong,
	"comments": hintLong, "notes": hintLong, "note": hintLong, "result": hintLong, "output": hintLong,
	"feedback": hintLong, "justification": hintLong, "conclusion": hintLong, "recommendation": hintLong,
	"advice": hintLong, "reason": hintLong, "overview": hintLong, "abstract": hintLong,
	"name": hintTitle, "title": hintTitle, "subject": hintTitle, "topic": hintTitle, "headline": hintTitle,
	"label": hintTitle, "heading": hintTitle, "caption": hintTitle,
	"category": hintWord, "tag": hintWord, "tags": hintWord, "type": hintWord, "kind": hintWord,
	"keyword": hintWord, "keywords": hintWord, "genre": hintWord, "intent": hintWord, "entity": hintWord,
	"entities": hintWord, "topics": hintWord, "categories": hintWord, "labels": hintWord,
	"language": hintLanguage, "lang": hintLanguage, "locale": hintLanguage,
	"city": hintPlace, "location": hintPlace, "place": hintPlace, "country": hintPlace, "region": hintPlace,
	"destination": hintPlace, "origin": hintPlace,
	"day": hintDate, "deadline": hintDate, "since": hintDate, "until": hintDate, "birthday": hintDate,
	"timestamp": hintDateTime, "time": hintDateTime, "datetime": hintDateTime, "when": hintDateTime,
	"sql": hintSQL, "statement": hintSQL,
	"currency": hintCurrency, "timezone": hintTimezone, "tz": hintTimezone,
	"confidence": hintScore, "score": hintScore, "probability": hintScore, "likelihood": hintScore,
	"relevance": hintScore, "certainty": hintScore, "accuracy": hintScore, "weight": hintScore,
	"limit": hintCount, "count": hintCount, "max_results": hintCount, "top_k": hintCount, "k": hintCount,
	"n": hintCount, "num_results": hintCount, "page_size": hintCount, "size": hintCount, "max": hintCount,
	"total": hintCount, "quantity": hintCount, "maxresults": hintCount, "topk": hintCount, "per_page": hintCount,
	"page": hintPage, "year": hintYear,
	"price": hintMoney, "amount": hintMoney, "cost": hintMoney, "budget": hintMoney,
}

// hintFor classifies a property name: exact names first, then telling fragments
// ("user_email", "fileName", "created_at").
func hintFor(name string) nameHint {
	lower := strings.ToLower(name)
	if h, ok := hintWords[lower]; ok {
		return h
	}
	switch {
	case strings.Contains(lower, "url") || strings.Contains(lower, "uri") || strings.Contains(lower, "link") ||
		strings.Contains(lower, "href") || strings.Contains(lower, "website"):
		return hintURL
	case strings.Contains(lower, "email"):
		return hintEmail
	case strings.Contains(lower, "path") || strings.Contains(lower, "file") || strings.Contains(lower, "folder") ||
		strings.HasSuffix(lower, "dir"):
		return hintPath
	case strings.Contains(lower, "sql"):
		return hintSQL
	case strings.Contains(lower, "phone"):
		return hintPhone
	case strings.Contains(lower, "timezone"):
		return hintTimezone
	case strings.HasSuffix(lower, "_at") || strings.Contains(lower, "timestamp") || strings.HasSuffix(name, "At"):
		return hintDateTime
	case strings.Contains(lower, "date"):
		return hintDate
	case lower == "id" || strings.HasSuffix(lower, "_id") || strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID"):
		return hintID
	case strings.HasSuffix(lower, "_name") || strings.HasSuffix(name, "Name") || strings.HasSuffix(lower, "_title"):
		return hintTitle
	case strings.HasSuffix(lower, "query") || strings.HasSuffix(lower, "question"):
		return hintQuery
	case strings.HasSuffix(lower, "summary") || strings.HasSuffix(lower, "description") || strings.HasSuffix(lower, "answer"):
		return hintLong
	case strings.HasPrefix(lower, "max_") || strings.HasPrefix(lower, "num_") || strings.HasSuffix(lower, "_count") ||
		strings.HasSuffix(lower, "_limit"):
		return hintCount
	case strings.HasSuffix(lower, "_score") || strings.HasSuffix(lower, "confidence"):
		return hintScore
	}
	return hintNone
}

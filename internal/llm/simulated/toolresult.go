package simulated

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentplane/agentplane/internal/llm"
)

// summary is what the simulated provider gathers from a tool's JSON result to describe it
// in one phrase.
type summary struct {
	listKey                            string // key of the first list found ("results", "rows"); "" at top level
	listLen                            int
	hasList, inList                    bool   // inList: the walk is inside the counted list
	head, headKey                      string // the most telling string value (a title, name …) and its key
	headRank                           int
	errMsg                             string
	hasErr, okFalse, okTrue, anyMember bool
}

// headKeys rank object keys whose string values best describe a result.
var headKeys = strings.Fields("title name summary snippet answer message text content description result status path url id")

// payloadKeys name lists that are likely the main content of a result.
var payloadKeys = strings.Fields("results rows items data hits records entries matches documents files")

// scanToolResult summarises a JSON document: the first list (at most three levels deep) and
// its length, the best headline string, and error or ok markers. It reports ok false when s
// is not a JSON object or array.
func scanToolResult(s string) (sum summary, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] != '{' && s[0] != '[' || !gjson.Valid(s) {
		return sum, false
	}
	sum.headRank = len(headKeys) + 1
	sum.walk(gjson.Parse(s), 1, "")
	return sum, true
}

// walk visits the members of c, a container depth levels deep that is the value of key in
// its parent object ("" in an array or at the top), in document order.
func (sum *summary) walk(c gjson.Result, depth int, key string) {
	// The first list counts, unless a later one is plainly the payload ("columns" then "rows").
	isPayload := func(k string) bool { return slices.Contains(payloadKeys, strings.ToLower(k)) }
	counted := c.IsArray() && depth <= 3 && (!sum.hasList || !sum.inList && !isPayload(sum.listKey) && isPayload(key))
	if counted {
		sum.hasList, sum.listKey, sum.listLen, sum.inList = true, key, len(c.Array()), true
	}

	obj := c.IsObject()
	c.ForEach(func(k, v gjson.Result) bool {
		sum.anyMember = sum.anyMember || obj
		is := func(names ...string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(k.Str, n) })
		}
		switch {
		case v.IsObject() || v.IsArray():
			sum.walk(v, depth+1, k.Str)
		case !obj:
		case v.Type == gjson.String:
			// An error message (under "error", or "message" of an object under "error"), or a
			// headline better than the one so far.
			if !sum.hasErr && (is("error") || is("message") && depth >= 2 && strings.EqualFold(key, "error")) {
				sum.hasErr, sum.errMsg = true, v.Str
			}
			rank := slices.IndexFunc(headKeys, func(h string) bool { return is(h) })
			if rank < 0 {
				rank = len(headKeys)
			}
			if v.Str != "" && rank < sum.headRank {
				sum.headRank, sum.head, sum.headKey = rank, v.Str, k.Str
			}
		case depth > 1:
		case is("ok", "success"):
			sum.okTrue, sum.okFalse = v.Raw == "true", v.Raw == "false"
		case is("error"):
			sum.hasErr = sum.hasErr || v.Raw != "null" && v.Raw != "false"
		case is("is_error", "isError"):
			sum.hasErr = sum.hasErr || v.Raw == "true"
		}
		return true
	})
	if counted {
		sum.inList = false
	}
}

// Kinds of tool result, which choose how a reply introduces them.
const (
	resultData    = iota // something was found or read
	resultConfirm        // an action went through
	resultError          // the tool failed
)

// toolResultKind classifies a tool result for phrasing.
func toolResultKind(content string) int {
	sum, ok := scanToolResult(content)
	switch {
	case !ok:
		if t := strings.TrimSpace(content); len(t) >= 5 && strings.EqualFold(t[:5], "error") {
			return resultError
		}
		return resultData
	case sum.hasErr || sum.okFalse:
		return resultError
	case sum.okTrue && !sum.hasList:
		return resultConfirm
	}
	return resultData
}

// appendToolSummary appends a noun phrase describing a tool result: `3 results, starting
// with "Lisbon travel guide"`, `an error ("not found")`, `"README.md"`, or the opening
// words of a plain-text result.
func appendToolSummary(b []byte, content string) []byte {
	quote := func(b []byte, s string, max int) []byte { return append(appendCollapsed(append(b, '"'), s, max), '"') }
	sum, ok := scanToolResult(content)
	switch {
	case !ok && strings.TrimSpace(content) != "":
		return quote(b, content, 80)
	case sum.hasErr && sum.errMsg != "":
		return append(appendCollapsed(append(b, `an error ("`...), sum.errMsg, 60), `")`...)
	case sum.hasErr:
		return append(b, "an error"...)
	case sum.okFalse:
		return append(b, "a failure"...)
	case sum.hasList && sum.head != "":
		return quote(append(appendCount(b, sum.listKey, sum.listLen), ", starting with "...), sum.head, 60)
	case sum.hasList:
		return appendCount(b, sum.listKey, sum.listLen)
	case sum.head != "" && sum.okTrue:
		return quote(append(appendCollapsed(b, sum.headKey, 30), ' '), sum.head, 60)
	case sum.head != "":
		return quote(b, sum.head, 60)
	case sum.okTrue:
		return append(b, "no details"...)
	case sum.anyMember:
		return append(b, "a structured result"...)
	}
	return append(b, "an empty result"...)
}

// appendCount appends how many entries a list holds, named after its key: "3 results",
// "1 forecast entry", "no items".
func appendCount(b []byte, key string, n int) []byte {
	if n == 0 {
		b = append(b, "no "...)
	} else {
		b = append(strconv.AppendInt(b, int64(n), 10), ' ')
	}
	word := len(key) > 2 && len(key) < 24 && !isStopword(key) && strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") == ""
	plural := word && key[len(key)-1] == 's'
	switch {
	case plural && n == 1 && strings.HasSuffix(key, "ies"):
		return append(append(b, key[:len(key)-3]...), 'y')
	case plural && n == 1:
		return append(b, key[:len(key)-1]...)
	case plural:
		return append(b, key...)
	case word && n == 1:
		return append(b, key+" entry"...)
	case word:
		return append(b, key+" entries"...)
	case n == 1:
		return append(b, "item"...)
	}
	return append(b, "items"...)
}

// appendCollapsed appends s with every whitespace run turned into one space, cut at a
// word boundary near maxBytes with an ellipsis.
func appendCollapsed(b []byte, s string, maxBytes int) []byte {
	written := 0
	for i, w := range strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r < 0x80 && llm.IsSpace(byte(r)) }) {
		if i > 0 && written >= maxBytes {
			return append(b, "…"...)
		}
		if i > 0 {
			b, written = append(b, ' '), written+1
		}
		for j := 0; j < len(w); j++ {
			if written >= maxBytes+20 && w[j] < 0x80 {
				return append(b, "…"...) // one very long word
			}
			b, written = append(b, w[j]), written+1
		}
	}
	return b
}

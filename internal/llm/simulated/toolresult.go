package simulated

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentplane/agentplane/internal/llm"
)

// summary is what a tool's JSON result says about itself, to describe it in one phrase.
type summary struct {
	listKey                            string // key of the first list found ("results"); "" at top level
	listLen                            int
	hasList, inList                    bool   // inList: the walk is inside the counted list
	head, headKey                      string // the most telling string value (a title …) and its key
	headRank                           int
	errMsg                             string
	hasErr, okFalse, okTrue, anyMember bool
}

// headKeys rank object keys whose string values best describe a result; payloadKeys name
// lists that are likely its main content.
var (
	headKeys    = strings.Fields("title name summary snippet answer message text content description result status path url id")
	payloadKeys = strings.Fields("results rows items data hits records entries matches documents files")
)

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
	c.ForEach(func(k, v gjson.Result) bool {
		is := func(name string) bool { return strings.EqualFold(k.Str, name) }
		sum.anyMember = sum.anyMember || c.IsObject()
		switch {
		case v.IsObject() || v.IsArray():
			sum.walk(v, depth+1, k.Str)
		case !c.IsObject():
		case v.Type == gjson.String:
			// An error message (under "error", or "message" of an object under "error"), or a
			// headline better than the one so far.
			if !sum.hasErr && (is("error") || is("message") && depth >= 2 && strings.EqualFold(key, "error")) {
				sum.hasErr, sum.errMsg = true, v.Str
			}
			rank := slices.IndexFunc(headKeys, is)
			if rank < 0 {
				rank = len(headKeys)
			}
			if v.Str != "" && rank < sum.headRank {
				sum.headRank, sum.head, sum.headKey = rank, v.Str, k.Str
			}
		case depth > 1:
		case is("ok") || is("success"):
			sum.okTrue, sum.okFalse = v.Raw == "true", v.Raw == "false"
		case is("error"):
			sum.hasErr = sum.hasErr || v.Raw != "null" && v.Raw != "false"
		case is("is_error") || is("isError"):
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
	switch t := strings.TrimSpace(content); {
	case !ok && len(t) >= 5 && strings.EqualFold(t[:5], "error"), ok && (sum.hasErr || sum.okFalse):
		return resultError
	case ok && sum.okTrue && !sum.hasList:
		return resultConfirm
	}
	return resultData
}

// appendToolSummary appends a noun phrase describing a tool result: `3 results, starting
// with "Lisbon travel guide"`, `an error ("not found")`, `"README.md"`, or the opening
// words of a plain-text result.
func appendToolSummary(b []byte, content string) []byte {
	quote := func(s string, max int) string { return `"` + collapse(s, max) + `"` }
	sum, ok := scanToolResult(content)
	phrase := "an empty result"
	switch {
	case !ok && strings.TrimSpace(content) != "":
		phrase = quote(content, 80)
	case sum.hasErr && sum.errMsg != "":
		phrase = "an error (" + quote(sum.errMsg, 60) + ")"
	case sum.hasErr:
		phrase = "an error"
	case sum.okFalse:
		phrase = "a failure"
	case sum.hasList:
		phrase = countOf(sum.listKey, sum.listLen)
		if sum.head != "" {
			phrase += ", starting with " + quote(sum.head, 60)
		}
	case sum.head != "" && sum.okTrue:
		phrase = collapse(sum.headKey, 30) + " " + quote(sum.head, 60)
	case sum.head != "":
		phrase = quote(sum.head, 60)
	case sum.okTrue:
		phrase = "no details"
	case sum.anyMember:
		phrase = "a structured result"
	}
	return append(b, phrase...)
}

// countOf says how many entries a list holds, named after its key: "3 results", "1
// forecast entry", "no items".
func countOf(key string, n int) string {
	count := "no "
	if n > 0 {
		count = strconv.Itoa(n) + " "
	}
	word := len(key) > 2 && len(key) < 24 && !isStopword(key) && strings.Trim(key, "abcdefghijklmnopqrstuvwxyz_") == ""
	plural := word && key[len(key)-1] == 's'
	switch {
	case plural && n == 1 && strings.HasSuffix(key, "ies"):
		return count + key[:len(key)-3] + "y"
	case plural && n == 1:
		return count + key[:len(key)-1]
	case plural:
		return count + key
	case word && n == 1:
		return count + key + " entry"
	case word:
		return count + key + " entries"
	case n == 1:
		return count + "item"
	}
	return count + "items"
}

// collapse returns s with every whitespace run turned into one space, cut at a word
// boundary near maxBytes with an ellipsis.
func collapse(s string, maxBytes int) string {
	var b []byte
	for i, w := range strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r < 0x80 && llm.IsSpace(byte(r)) }) {
		if i > 0 && len(b) >= maxBytes {
			return string(b) + "…"
		}
		if i > 0 {
			b = append(b, ' ')
		}
		for j := 0; j < len(w); j++ {
			if len(b) >= maxBytes+20 && w[j] < 0x80 {
				return string(b) + "…" // one very long word
			}
			b = append(b, w[j])
		}
	}
	return string(b)
}

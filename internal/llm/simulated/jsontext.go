package simulated

import (
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/agentplane/agentplane/internal/llm"
)

// appendCollapsed appends s with every whitespace run turned into one space, cut at a
// word boundary near maxBytes with an ellipsis.
func appendCollapsed(b []byte, s string, maxBytes int) []byte {
	s = strings.TrimSpace(s)
	written := 0
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if llm.IsSpace(c) {
			space = true
			continue
		}
		if space {
			if written >= maxBytes {
				return append(b, "…"...)
			}
			b = append(b, ' ')
			written++
			space = false
		}
		if written >= maxBytes+20 && c < 0x80 {
			return append(b, "…"...) // one very long word
		}
		b = append(b, c)
		written++
	}
	return b
}

// toolResultSummary is what the simulated provider gathers from a tool's JSON result to
// describe it in one phrase.
type toolResultSummary struct {
	listKey   string // key of the first list found ("results", "rows"); "" at top level
	listLen   int
	hasList   bool
	inList    bool   // the walk is inside the counted list
	head      string // the most telling string value (a title, name, summary …)
	headKey   string
	headRank  int
	errMsg    string
	hasErr    bool
	okFalse   bool
	okTrue    bool
	anyMember bool
}

// headKeys ranks object keys whose string values best describe a result.
var headKeys = []string{"title", "name", "summary", "snippet", "answer", "message", "text", "content",
	"description", "result", "status", "path", "url", "id"}

// headRankOf returns the rank of key in headKeys, or len(headKeys) for any other key.
func headRankOf(key string) int {
	for i, k := range headKeys {
		if strings.EqualFold(k, key) {
			return i
		}
	}
	return len(headKeys)
}

// scanToolResult summarises a JSON document: the first list (at most three levels deep) and
// its length, the best headline string, and error or ok markers. It reports ok false when s
// is not a JSON object or array.
func scanToolResult(s string) (sum toolResultSummary, ok bool) {
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
func (sum *toolResultSummary) walk(c gjson.Result, depth int, key string) {
	// The first list counts, unless a later one is plainly the payload ("columns" then "rows").
	counted := c.IsArray() && depth <= 3 && (!sum.hasList || !sum.inList && !isPayloadKey(sum.listKey) && isPayloadKey(key))
	if counted {
		sum.hasList, sum.listKey, sum.listLen, sum.inList = true, key, len(c.Array()), true
	}

	obj := c.IsObject()
	c.ForEach(func(k, v gjson.Result) bool {
		sum.anyMember = sum.anyMember || obj
		switch {
		case v.IsObject() || v.IsArray():
			sum.walk(v, depth+1, k.Str)
		case !obj:
		case v.Type == gjson.String:
			sum.member(k.Str, v.Str, depth >= 2 && strings.EqualFold(key, "error"))
		case depth == 1:
			sum.literal(k.Str, v.Raw)
		}
		return true
	})
	if counted {
		sum.inList = false
	}
}

// member notes a string member of an object: an error message (under "error", or "message"
// of an object under "error"), or a headline better than the one so far.
func (sum *toolResultSummary) member(key, str string, inError bool) {
	if !sum.hasErr && (strings.EqualFold(key, "error") || inError && strings.EqualFold(key, "message")) {
		sum.hasErr, sum.errMsg = true, str
	}
	if str != "" {
		if r := headRankOf(key); r < sum.headRank {
			sum.headRank, sum.head, sum.headKey = r, str, key
		}
	}
}

// literal notes a number, boolean or null member of the top-level object: ok or success,
// error, is_error.
func (sum *toolResultSummary) literal(key, lit string) {
	switch {
	case strings.EqualFold(key, "ok") || strings.EqualFold(key, "success"):
		sum.okTrue, sum.okFalse = lit == "true", lit == "false"
	case strings.EqualFold(key, "error") && lit != "null" && lit != "false":
		sum.hasErr = true
	case strings.EqualFold(key, "is_error") || strings.EqualFold(key, "isError"):
		sum.hasErr = sum.hasErr || lit == "true"
	}
}

// isPayloadKey reports whether a list under key is likely the main content of a result.
func isPayloadKey(key string) bool {
	switch strings.ToLower(key) {
	case "results", "rows", "items", "data", "hits", "records", "entries", "matches", "documents", "files":
		return true
	}
	return false
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
	sum, ok := scanToolResult(content)
	if !ok {
		if strings.TrimSpace(content) == "" {
			return append(b, "an empty result"...)
		}
		b = append(b, '"')
		b = appendCollapsed(b, content, 80)
		return append(b, '"')
	}
	switch {
	case sum.hasErr:
		b = append(b, "an error"...)
		if sum.errMsg != "" {
			b = append(b, " (\""...)
			b = appendCollapsed(b, sum.errMsg, 60)
			b = append(b, "\")"...)
		}
		return b
	case sum.okFalse:
		return append(b, "a failure"...)
	case sum.hasList:
		// Name the entries after the list's key: "3 results", "2 forecast entries".
		key := sum.listKey
		word := len(key) > 2 && len(key) < 24 && !isStopword(key)
		for i := 0; i < len(key) && word; i++ {
			word = isLower(key[i]) || key[i] == '_'
		}
		if sum.listLen == 0 {
			b = append(b, "no "...)
		} else {
			b = strconv.AppendInt(b, int64(sum.listLen), 10)
			b = append(b, ' ')
		}
		one := sum.listLen == 1
		switch {
		case word && key[len(key)-1] == 's' && one && strings.HasSuffix(key, "ies"):
			b = append(append(b, key[:len(key)-3]...), 'y')
		case word && key[len(key)-1] == 's' && one:
			b = append(b, key[:len(key)-1]...)
		case word && key[len(key)-1] == 's':
			b = append(b, key...)
		case word:
			b = append(append(b, key...), " entr"...)
			if one {
				b = append(b, 'y')
			} else {
				b = append(b, "ies"...)
			}
		case one:
			b = append(b, "item"...)
		default:
			b = append(b, "items"...)
		}
		if sum.head != "" {
			b = append(b, ", starting with \""...)
			b = appendCollapsed(b, sum.head, 60)
			b = append(b, '"')
		}
		return b
	case sum.head != "":
		if sum.okTrue {
			b = appendCollapsed(b, sum.headKey, 30)
			b = append(b, " \""...)
			b = appendCollapsed(b, sum.head, 60)
			return append(b, '"')
		}
		b = append(b, '"')
		b = appendCollapsed(b, sum.head, 60)
		return append(b, '"')
	case sum.okTrue:
		return append(b, "no details"...)
	case sum.anyMember:
		return append(b, "a structured result"...)
	default:
		return append(b, "an empty result"...)
	}
}

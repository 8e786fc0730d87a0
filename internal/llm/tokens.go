package llm

// bytesPerUnit is how many bytes of an unbroken run count as one word, so that long
// strings without spaces (URLs, identifiers, base64, compact JSON) are not undercounted.
const bytesPerUnit = 8

// CountTokens returns a deterministic estimate of the tokens in s, close enough to real
// tokenizers for usage accounting and limits. It splits s on ASCII whitespace, counts
// each run as one word per 8 bytes begun (so an ordinary word is one word and a 40-byte
// URL is five), and returns words*4/3 rounded up: about 4 tokens per 3 words of prose and
// one per 6 bytes of unbroken text. CountTokens("") is 0, and any s with a non-space byte
// counts at least 2. A prefix of s never counts more than s, which is what lets the
// simulated provider cut a streamed answer at Request.MaxTokens.
func CountTokens(s string) int {
	return unitsToTokens(countUnits(s))
}

// countUnits counts the words of s as CountTokens defines them.
func countUnits[T ~string | ~[]byte](s T) int {
	units, run := 0, 0
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			if run > 0 {
				units += (run + bytesPerUnit - 1) / bytesPerUnit
				run = 0
			}
			continue
		}
		run++
	}
	if run > 0 {
		units += (run + bytesPerUnit - 1) / bytesPerUnit
	}
	return units
}

// unitsToTokens converts a word count to tokens: 4/3 per word, rounded up.
func unitsToTokens(units int) int {
	return (units*4 + 2) / 3
}

// isSpace reports whether b is ASCII whitespace.
func isSpace(b byte) bool { return spaceBytes[b] }

// IsSpace reports whether b is ASCII whitespace, as CountTokens splits words.
func IsSpace(b byte) bool { return spaceBytes[b] }

// NextChunk returns the end of the word-sized chunk of s starting at i (one run of
// non-space bytes, any whitespace before it at the very start, and the whitespace after
// it) and its word count; WordTokens turns a running word count into tokens, so a stream
// cut after any chunk counts exactly CountTokens of what it sent.
func NextChunk(s string, i int) (end, words int) { return nextChunk(s, i) }

// WordTokens converts a word count (as NextChunk counts words) to tokens.
func WordTokens(words int) int { return unitsToTokens(words) }

// spaceBytes marks the ASCII whitespace bytes; a table is cheaper than comparisons in
// the loops that scan every byte of a prompt.
var spaceBytes = [256]bool{' ': true, '\n': true, '\t': true, '\r': true, '\v': true, '\f': true}

// nextChunk returns the end of the word-sized chunk of s starting at i: one run of
// non-space bytes (with any whitespace before it, at the very start) and the whitespace
// after it. It also returns the chunk's word count for CountTokens.
func nextChunk(s string, i int) (end, units int) {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	k := j
	for k < len(s) && !isSpace(s[k]) {
		k++
	}
	run := k - j
	for k < len(s) && isSpace(s[k]) {
		k++
	}
	return k, (run + bytesPerUnit - 1) / bytesPerUnit
}

// EstimateUsage counts a call's tokens with CountTokens, for a server that reports none:
// the prompt is every message (content, tool calls), tool spec and the output schema; the
// completion is the answer, its reasoning and its tool calls.
func EstimateUsage(req *Request, resp *Response) Usage {
	completion := CountTokens(resp.Content)
	for _, th := range resp.Thinking {
		completion += CountTokens(th.Text)
	}
	for _, tc := range resp.ToolCalls {
		completion += CountTokens(tc.Name) + unitsToTokens(countUnits(tc.Arguments))
	}
	return Usage{PromptTokens: PromptTokens(req), CompletionTokens: completion, Estimated: true}
}

// PromptTokens estimates the size of a request's prompt with CountTokens: every message's
// content and tool calls, the tool specs and the output schema.
func PromptTokens(req *Request) int {
	prompt := 0
	for i := range req.Messages {
		m := &req.Messages[i]
		prompt += CountTokens(m.Content)
		for _, tc := range m.ToolCalls {
			prompt += CountTokens(tc.Name) + unitsToTokens(countUnits(tc.Arguments))
		}
	}
	for i := range req.Tools {
		t := &req.Tools[i]
		prompt += CountTokens(t.Name) + CountTokens(t.Description) + unitsToTokens(countUnits(t.InputSchema))
	}
	prompt += unitsToTokens(countUnits(req.OutputSchema))
	return prompt
}

// Package anthropicmsg calls Anthropic's Messages API (streamed) through the official SDK,
// github.com/anthropics/anthropic-sdk-go.
//
// Every call streams (POST /v1/messages with "stream": true): text and thinking deltas are
// emitted as they are decoded, tool calls are assembled from their input_json_delta chunks,
// and structured output is a forced tool named "output" whose input is the answer. The
// SDK's own retries are off: llm.Call retries, and needs each attempt's failure as an
// *llm.Error.
package anthropicmsg

package triggers

import (
	"encoding/json"

	"github.com/tidwall/gjson"
)

// DefaultPlatformMapping is the input of a chat platform's run when its trigger has no
// input_mapping: the message text as the input's "message".
var DefaultPlatformMapping = map[string]string{"message": "text"}

// MapInput builds a run's input from an event document: each field of mapping gets the
// value at its GJSON path in doc (a path that matches nothing leaves the field out). An
// empty mapping makes the whole document the input when it is a JSON object, else an
// empty input.
func MapInput(mapping map[string]string, doc []byte) map[string]any {
	out := map[string]any{}
	if len(mapping) == 0 {
		var whole map[string]any
		if json.Unmarshal(doc, &whole) == nil && whole != nil {
			return whole
		}
		return out
	}
	for field, path := range mapping {
		r := gjson.GetBytes(doc, path)
		if !r.Exists() {
			continue
		}
		out[field] = r.Value()
	}
	return out
}

// PlatformDocument is the document a chat platform's input_mapping reads: the message's
// text, the platform user id and the platform's whole payload.
func PlatformDocument(text, user string, payload map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"text": text, "user": user, "payload": payload})
	return b
}

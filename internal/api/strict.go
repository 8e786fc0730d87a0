package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/jsonfields"
)

// decodeKeep is decode that also returns the raw body, for handlers that read a part of it
// again: a strict look at an agent config, or a version's patch.
func decodeKeep(w http.ResponseWriter, r *http.Request, dst any) ([]byte, error) {
	var buf bytes.Buffer
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(r.Body, &buf), r.Body}
	err := decode(w, r, dst)
	return buf.Bytes(), err
}

// bodyField returns the raw JSON of one top-level field of a JSON object body; nil when it
// is absent or null.
func bodyField(body []byte, name string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil
	}
	raw := obj[name]
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

var agentConfigType = reflect.TypeFor[domain.AgentConfig]()

// checkConfigKeys answers 422 for the first key of the body's agent config (field name)
// that an agent config does not have, with the closest known key: a typo such as
// "temprature" would otherwise be dropped without a word. Other top-level request fields
// stay lenient (unknown ones are ignored).
func checkConfigKeys(body []byte, name string) error {
	raw := bodyField(body, name)
	if raw == nil {
		return nil
	}
	if err := jsonfields.Unknown(raw, agentConfigType, name); err != nil {
		return domain.Invalid(err.Path, "%s", err.Message())
	}
	return nil
}

// checkStrayInput answers 422 when a run request has no input but a top-level field its type
// t does not know ({"message": "hi"}): that is the input sent unwrapped, which would otherwise
// run with an empty input and answer as if nothing was asked.
func checkStrayInput(body []byte, input map[string]any, t reflect.Type) error {
	if input != nil {
		return nil
	}
	if err := jsonfields.Unknown(body, t, ""); err != nil {
		return domain.Invalid("input", "is missing and the body has a top-level field %q this route does not know: "+
			"the run's input goes inside \"input\", e.g. {\"input\": {%q: …}}", err.Path, err.Path)
	}
	return nil
}

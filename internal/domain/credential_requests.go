package domain

import (
	"encoding/json"
	"reflect"
	"strconv"
)

// CredentialValueMaxBytes bounds a credential's value in bytes (the document's maxLength
// counts characters).
const CredentialValueMaxBytes = 16 << 10

// CredentialCreateRequest is a new credential as a client asks for it. The document checks its
// shape; Validate holds the rest, and providers.CheckCredential the settings of a model
// provider's credential.
type CredentialCreateRequest struct {
	Name        string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Type        string         `json:"type" enum:"api_key,bearer_token,basic_auth,database_url,oauth2"`
	Provider    string         `json:"provider,omitempty" maxLength:"100" doc:"The service the credential is for, e.g. openai or postgres."`
	Description string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    map[string]any `json:"metadata,omitempty" doc:"Non-secret settings. For a model provider: base_url (http or https; required for ollama and openai_compatible; with the version path for the Chat Completions family, e.g. http://localhost:11434/v1, the host root for anthropic and google) default (true: the only credential runs use for this provider when several exist) and weight (0 to 1000, default 1: without a default, the provider's credentials form a pool and each call goes to one drawn by weight; a credential answering 429 or 5xx cools down for every node; 0 keeps it out of the pool)."`
	Value       SecretValue    `json:"value" minLength:"1" pattern:"\\S" maxLength:"16384" doc:"The secret. It is encrypted at rest and never returned: responses carry masked_value. Text as sent: a lone UTF-16 surrogate escape such as \\udc80, which JSON decoders silently replace, is a 422."`
}

// Validate holds a new credential's rules: a name that is more than white space and a value
// within CredentialValueMaxBytes.
func (r *CredentialCreateRequest) Validate() error {
	return FirstErr(NotBlank("name", r.Name), checkCredentialValue(string(r.Value)))
}

// CredentialUpdateRequest is a change to a credential; a field left out stays as it is.
type CredentialUpdateRequest struct {
	Name        *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Provider    *string         `json:"provider,omitempty" maxLength:"100"`
	Description *string         `json:"description,omitempty" maxLength:"2000"`
	Metadata    *map[string]any `json:"metadata,omitempty" doc:"Replaces the metadata object."`
	Value       *SecretValue    `json:"value,omitempty" minLength:"1" pattern:"\\S" maxLength:"16384" doc:"A new secret (rotation); encrypted at rest and never returned. A lone UTF-16 surrogate escape is a 422, as on create."`
}

// Validate holds the rules of a credential change that need not know the credential: a name
// that is more than white space and a value within CredentialValueMaxBytes.
func (r *CredentialUpdateRequest) Validate() error {
	if err := NotBlankIfSet("name", r.Name); err != nil {
		return err
	}
	if r.Value != nil {
		return checkCredentialValue(string(*r.Value))
	}
	return nil
}

// checkCredentialValue validates a secret without ever echoing it.
func checkCredentialValue(v string) error {
	if err := NotBlank("value", v); err != nil {
		return err
	}
	if len(v) > CredentialValueMaxBytes {
		return Invalid("value", "must be at most %d bytes", CredentialValueMaxBytes)
	}
	return nil
}

// SecretValue is a credential value as sent. encoding/json turns a lone UTF-16 surrogate
// escape ("\udc80") into U+FFFD without a word, which would store a secret other than the one
// the caller holds and make it fail later for no visible reason: such a value is a FieldError
// naming value instead.
type SecretValue string

// UnmarshalJSON decodes a JSON string, refusing lone surrogate escapes; null leaves the value
// as it is.
func (v *SecretValue) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		if string(b) == "null" {
			return nil
		}
		// The decoder adds the field's name: "value: expected string, got number".
		return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: reflect.TypeFor[string]()}
	}
	if hasLoneSurrogate(b) {
		return Invalid("value", "must be valid Unicode text; it holds a lone UTF-16 surrogate escape (\\ud800 to \\udfff) that would be replaced")
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*v = SecretValue(s)
	return nil
}

// jsonValueKind names the kind of a raw JSON value that is not a string.
func jsonValueKind(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "boolean"
	}
	return "number"
}

// hasLoneSurrogate reports whether a raw JSON string holds a \uXXXX escape of a UTF-16
// surrogate that is not part of a high-low pair.
func hasLoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := unicodeEscapeAt(b, i)
		if !ok {
			i++ // another escape (\\, \", \n …): skip its character
			continue
		}
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := unicodeEscapeAt(b, i+1)
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// unicodeEscapeAt reads a \uXXXX escape starting at b[i].
func unicodeEscapeAt(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

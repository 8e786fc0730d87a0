package platform

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// FieldKind says how a trigger config field is read, checked and stored.
type FieldKind string

// The kinds of trigger config field.
const (
	// KindText is a plain string, stored and shown as is.
	KindText FieldKind = "text"
	// KindSecret is a string sealed at rest and shown masked; sent back masked, it keeps its value.
	KindSecret FieldKind = "secret"
	// KindCredential is the id of a workspace credential, checked to exist.
	KindCredential FieldKind = "credential"
	// KindEnum is a string out of Field.Enum.
	KindEnum FieldKind = "enum"
	// KindBool is true or false.
	KindBool FieldKind = "bool"
)

// Field is one config key a trigger type accepts.
type Field struct {
	Name     string
	Kind     FieldKind
	Required bool
	Enum     []string           // the allowed values of a KindEnum field
	Default  any                // the value stored when the field is left out; nil: none
	Check    func(string) error // an extra check of a text or secret value; its message names no field
}

// Spec declares one trigger type: everything the API, the store and the hook endpoint need to
// know about it. Each type registers its Spec once, in its own file, from an init function.
type Spec struct {
	// Type is the name clients send as the trigger's type.
	Type string
	// Doc is one sentence for the API document describing the type's config keys.
	Doc string
	// Fields are the config keys the type accepts; any other key is refused.
	Fields []Field
	// Validate, when set, checks the whole config (secrets decrypted) after every field passed.
	Validate func(Config) error
	// Platform handles the type's hook calls; nil for a type without a hook URL (schedule).
	Platform Platform
	// Chat reports whether hook calls are chat messages: the run's input is mapped from
	// {text, user, payload}, each conversation is a chat session, and the answer goes back to
	// the platform. false: the call's JSON body is the document (the generic webhook).
	Chat bool
	// HookGET reports whether the hook also answers GET (WhatsApp's verification handshake).
	HookGET bool
	// ReplyCredential names the config field holding the credential replies are sent with.
	ReplyCredential string
}

var registry = struct {
	sync.RWMutex
	specs map[string]Spec
}{specs: map[string]Spec{}}

// Register adds a trigger type. It panics when the type is empty or already registered, or a
// field is declared twice: both are programming errors found at start-up.
func Register(s Spec) {
	if s.Type == "" {
		panic("platform: Register with an empty type")
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if seen[f.Name] {
			panic(fmt.Sprintf("platform: trigger type %s declares field %s twice", s.Type, f.Name))
		}
		seen[f.Name] = true
	}

	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.specs[s.Type]; dup {
		panic(fmt.Sprintf("platform: trigger type %s registered twice", s.Type))
	}
	registry.specs[s.Type] = s
}

// Unregister removes a trigger type; tests use it to drop a type they registered.
func Unregister(typ string) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.specs, typ)
}

// Lookup returns the Spec of a trigger type.
func Lookup(typ string) (Spec, bool) {
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.specs[typ]
	return s, ok
}

// Types returns the name of every registered trigger type, sorted.
func Types() []string {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]string, 0, len(registry.specs))
	for t := range registry.specs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Specs returns every registered trigger type's Spec, sorted by type.
func Specs() []Spec {
	types := Types()
	out := make([]Spec, 0, len(types))
	for _, t := range types {
		if s, ok := Lookup(t); ok {
			out = append(out, s)
		}
	}
	return out
}

// For returns the platform of a trigger type that has a hook URL; false for others.
func For(typ string) (Platform, bool) {
	s, ok := Lookup(typ)
	if !ok || s.Platform == nil {
		return nil, false
	}
	return s.Platform, true
}

// FieldNames returns the names of the type's config fields, in declared order.
func (s Spec) FieldNames() []string {
	names := make([]string, 0, len(s.Fields))
	for _, f := range s.Fields {
		names = append(names, f.Name)
	}
	return names
}

// Field returns the declaration of one config field.
func (s Spec) Field(name string) (Field, bool) {
	i := slices.IndexFunc(s.Fields, func(f Field) bool { return f.Name == name })
	if i < 0 {
		return Field{}, false
	}
	return s.Fields[i], true
}

package client

import "encoding/json"

// Nullable is a field of a PATCH body that null clears (a score config's min, say): left
// zero it is not sent, Set sends a value and Null sends null.
type Nullable[T any] struct {
	value T
	state nullState
}

type nullState uint8

const (
	nullUnset nullState = iota
	nullValue
	nullNull
)

// Set returns a Nullable that sends v.
func Set[T any](v T) Nullable[T] { return Nullable[T]{value: v, state: nullValue} }

// Null returns a Nullable that sends null.
func Null[T any]() Nullable[T] { return Nullable[T]{state: nullNull} }

// Get returns the value and whether one is set (false for unset and null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.state == nullValue }

// IsNull reports a Nullable that sends null.
func (n Nullable[T]) IsNull() bool { return n.state == nullNull }

// IsZero reports an unset Nullable, which omitzero leaves out of the body.
func (n Nullable[T]) IsZero() bool { return n.state == nullUnset }

// MarshalJSON writes the value, or null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.state != nullValue {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON reads a value or null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Null[T]()
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Set(v)
	return nil
}

// Package domain holds the rules of agentplane's resources that do not depend on how they are
// stored or served: for now the one error type every validation answers with.
package domain

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// FieldError says a well-formed value is not acceptable: Field names it by its JSON path
// ("config.tools[0].name"), Message says what is wrong in words a caller can act on. The API
// answers it with 422 validation_error and the message "field: message".
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Invalid is a FieldError naming field, its message formatted as fmt.Sprintf does.
func Invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotBlank checks that a string field holds more than white space: a semantic rule the
// published schema (minLength 1) cannot say.
func NotBlank(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return Invalid(field, "is required and must not be empty")
	}
	return nil
}

// NotBlankIfSet is NotBlank for a field of a change (PATCH) request: nil, a field left out,
// passes.
func NotBlankIfSet(field string, v *string) error {
	if v == nil {
		return nil
	}
	return NotBlank(field, *v)
}

// MaxLen checks a string's length in characters (code points, as JSON Schema's maxLength
// counts), for values that reach a rule without passing the HTTP schema (seed data, fixtures).
func MaxLen(field, v string, n int) error {
	if utf8.RuneCountInString(v) > n {
		return Invalid(field, "must be at most %d characters", n)
	}
	return nil
}

// OneOf checks an enum value.
func OneOf(field, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return Invalid(field, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
	}
	return nil
}

// FirstErr returns the first non-nil error: checks written as one list, answered in order.
func FirstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

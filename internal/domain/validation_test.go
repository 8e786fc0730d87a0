package domain

import (
	"errors"
	"testing"
)

func TestFieldError(t *testing.T) {
	t.Run("names the field first", func(t *testing.T) {
		err := Invalid("config.tools[0].name", "must be at most %d characters", 128)
		if got := err.Error(); got != "config.tools[0].name: must be at most 128 characters" {
			t.Fatalf("Error() = %q", got)
		}
	})
	t.Run("NotBlank refuses white space only", func(t *testing.T) {
		var fe *FieldError
		if err := NotBlank("name", " \t\u00a0"); !errors.As(err, &fe) || fe.Field != "name" {
			t.Fatalf("NotBlank = %v", err)
		}
		if err := NotBlank("name", " x "); err != nil {
			t.Fatalf("NotBlank(\" x \") = %v", err)
		}
	})
	t.Run("MaxLen counts characters", func(t *testing.T) {
		if err := MaxLen("name", "ééé", 3); err != nil {
			t.Fatalf("MaxLen of 3 characters (6 bytes) = %v", err)
		}
		if err := MaxLen("name", "éééé", 3); err == nil {
			t.Fatal("MaxLen of 4 characters passed a limit of 3")
		}
	})
	t.Run("OneOf names the allowed values", func(t *testing.T) {
		err := OneOf("type", "robot", []string{"simple", "agent"})
		if err == nil || err.Error() != `type: must be one of simple, agent, got "robot"` {
			t.Fatalf("OneOf = %v", err)
		}
	})
	t.Run("FirstErr keeps the order", func(t *testing.T) {
		a, b := Invalid("a", "x"), Invalid("b", "y")
		if got := FirstErr(nil, a, b); got != a {
			t.Fatalf("FirstErr = %v", got)
		}
		if got := FirstErr(nil, nil); got != nil {
			t.Fatalf("FirstErr of nils = %v", got)
		}
	})
}

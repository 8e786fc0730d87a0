package domain

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// Time is a UTC instant with millisecond precision, written in JSON as RFC 3339 with exactly
// three fractional digits ("2026-11-21T11:30:34.120Z") and stored as Unix milliseconds.
type Time struct{ time.Time }

// Now returns the current time truncated to milliseconds.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Millisecond)} }

// TimeFromMillis converts stored Unix milliseconds.
func TimeFromMillis(ms int64) Time { return Time{time.UnixMilli(ms).UTC()} }

const timeLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes the RFC 3339 form, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	b := make([]byte, 0, len(timeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads any RFC 3339 time.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var v time.Time
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Time{v.UTC().Truncate(time.Millisecond)}
	return nil
}

// Value stores the time as Unix milliseconds.
func (t Time) Value() (driver.Value, error) {
	if t.IsZero() {
		return nil, nil
	}
	return t.UnixMilli(), nil
}

// Scan reads Unix milliseconds.
func (t *Time) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = Time{}
	case int64:
		*t = TimeFromMillis(v)
	default:
		return fmt.Errorf("scan time: unexpected %T", src)
	}
	return nil
}

// JSONObject is a free-form JSON object column (metadata, settings).
type JSONObject map[string]any

// Value stores the object as JSON text.
func (o JSONObject) Value() (driver.Value, error) {
	if o == nil {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]any(o))
	return string(b), err
}

// Scan reads JSON text.
func (o *JSONObject) Scan(src any) error {
	if isJSONText(src, "{}") { // most rows: no need to run the decoder
		*o = JSONObject{}
		return nil
	}
	return ScanJSON(src, o)
}

// Strings is a list of strings stored as a JSON array.
type Strings []string

// Value stores the list as JSON text.
func (l Strings) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

// Scan reads JSON text.
func (l *Strings) Scan(src any) error {
	if isJSONText(src, "[]") {
		*l = Strings{}
		return nil
	}
	return ScanJSON(src, l)
}

// isJSONText reports whether a scanned column holds exactly text.
func isJSONText(src any, text string) bool {
	switch v := src.(type) {
	case string:
		return v == text
	case []byte:
		return string(v) == text
	}
	return false
}

// MarshalJSON writes the list, and [] for a nil one: a list is never null in a response.
func (l Strings) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(l))
}

func ScanJSON(src any, dst any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("scan json: unexpected %T", src)
	}
	return json.Unmarshal(b, dst)
}

// Page selects one page of a list: Page is 1-based. After, when set, is where the previous
// page ended (from a cursor): lists ordered newest first start after it instead of skipping
// the rows of the pages before; the others still skip by Page.
type Page struct {
	Page  int
	Limit int
	After *Keyset
}

// Keyset is the position of one row in a list ordered newest first: its creation time and id.
type Keyset struct {
	CreatedAt Time
	ID        string
}

// Deref is the string p points to, or "" for nil.
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

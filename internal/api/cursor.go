package api

import (
	"encoding/base64"
	"encoding/json"
	"reflect"

	"github.com/agentplane/agentplane/internal/domain"
)

// cursor is what next_cursor encodes: the number of the page it opens and, for items that
// have them, the creation time and id of the last item before it. Lists ordered newest first
// continue after that item (store.Page.After); the others skip to the page.
type cursor struct {
	Page      int    `json:"p"`
	CreatedAt *int64 `json:"t,omitempty"`
	ID        string `json:"i,omitempty"`
}

// maxCursorID bounds the id a cursor carries (KSUIDs, or the 32 hex digits of ingested ids).
const maxCursorID = 128

// encodeCursor makes the cursor of page, which follows last.
func encodeCursor(page int, last any) string {
	c := cursor{Page: page}
	if at, id, ok := keysetOf(last); ok {
		ms := at.UnixMilli()
		c.CreatedAt, c.ID = &ms, id
	}
	raw, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(raw)
}

// decodeCursor sets the page that a cursor made by encodeCursor opens; anything else is a 400.
func decodeCursor(v string, p *domain.Page) error {
	bad := badRequest("cursor is not one this server gave: send the next_cursor of a page unchanged")
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return bad
	}
	var c cursor
	if err := json.Unmarshal(raw, &c); err != nil || c.Page < 1 || c.Page > 1_000_000 || len(c.ID) > maxCursorID ||
		(c.CreatedAt == nil) != (c.ID == "") {
		return bad
	}
	p.Page = c.Page
	if c.CreatedAt != nil {
		p.After = &domain.Keyset{CreatedAt: domain.TimeFromMillis(*c.CreatedAt), ID: c.ID}
	}
	return nil
}

var storeTime = reflect.TypeFor[domain.Time]()

// keysetOf reads an item's ID and CreatedAt fields, when it has both.
func keysetOf(item any) (domain.Time, string, bool) {
	v := reflect.ValueOf(item)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return domain.Time{}, "", false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return domain.Time{}, "", false
	}
	id, at := v.FieldByName("ID"), v.FieldByName("CreatedAt")
	if !id.IsValid() || id.Kind() != reflect.String || !at.IsValid() || at.Type() != storeTime {
		return domain.Time{}, "", false
	}
	return at.Interface().(domain.Time), id.String(), true
}

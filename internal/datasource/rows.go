package datasource

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Values are mapped to JSON by the column's database type:
//   - integers are numbers, floating-point values numbers (NaN and ±Inf the strings "NaN",
//     "Infinity", "-Infinity"); numeric/decimal are strings, exactly as the database prints
//     them, since a JSON number would lose digits;
//   - booleans are booleans (SQLite's 0/1 too, in a column declared bool or boolean);
//   - timestamps are RFC 3339 strings (fractional seconds when there are some), dates
//     2006-01-02, times of day as the database prints them;
//   - json and jsonb are the JSON value itself, not a string holding it;
//   - binary values (bytea, blob, binary, varbinary) are base64 strings;
//   - everything else (text, uuid, intervals, arrays, enums, network addresses) is a string;
//   - NULL is null.

// readRows reads at most bound rows, and stops before the row that would take the JSON size
// of the rows past maxBytes; cancel stops the query on the server when rows are left unread.
func readRows(rows *sql.Rows, bound, maxBytes int, cancel context.CancelFunc) (*Result, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	res := &Result{Columns: make([]Column, len(cts)), Rows: [][]any{}}
	types := make([]string, len(cts))
	for i, ct := range cts {
		types[i] = typeName(ct.DatabaseTypeName())
		res.Columns[i] = Column{Name: ct.Name(), Type: types[i]}
	}
	raw := make([]any, len(cts))
	ptrs := make([]any, len(cts))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	size := 2 // the brackets of the rows array
	for rows.Next() {
		if len(res.Rows) == bound {
			res.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]any, len(raw))
		for i, v := range raw {
			row[i] = jsonValue(types[i], v)
			if res.Columns[i].Type == "" && v != nil {
				res.Columns[i].Type = storageClass(v)
			}
		}
		b, err := json.Marshal(row)
		if err != nil {
			return nil, err
		}
		if size+len(b)+1 > maxBytes {
			res.Truncated = true
			break
		}
		size += len(b) + 1
		res.Rows = append(res.Rows, row)
	}
	if res.Truncated {
		cancel() // the server need not produce the rows nobody reads
		return res, nil
	}
	return res, rows.Err()
}

// typeName is the database's type name as results show it: lower case, PostgreSQL's array
// types (_int4) as int4[].
func typeName(t string) string {
	t = strings.ToLower(t)
	if len(t) > 1 && t[0] == '_' {
		return t[1:] + "[]"
	}
	return t
}

// storageClass names the type of a value whose column has no declared type (an expression
// in SQLite).
func storageClass(v any) string {
	switch v.(type) {
	case int64:
		return "integer"
	case float64:
		return "real"
	case []byte:
		return "blob"
	case bool:
		return "boolean"
	case time.Time:
		return "timestamp"
	}
	return "text"
}

// baseType is a type name without its size, precision or array brackets.
func baseType(t string) string {
	if i := strings.IndexAny(t, "(["); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(strings.TrimPrefix(t, "unsigned "))
}

func isBinary(t string) bool {
	switch baseType(t) {
	case "bytea", "blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary", "bit", "geometry":
		return true
	}
	return false
}

// jsonValue maps one scanned value of a column of type typ (as typeName gives it) to JSON.
func jsonValue(typ string, v any) any {
	base := baseType(typ)
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		if base == "bool" || base == "boolean" {
			return x != 0
		}
		return x
	case float64:
		return jsonFloat(x)
	case float32:
		return jsonFloat(float64(x))
	case time.Time:
		switch base {
		case "date":
			return x.Format(time.DateOnly)
		case "time", "timetz":
			return x.Format(time.TimeOnly)
		}
		return x.Format(time.RFC3339Nano)
	case []byte:
		if isBinary(typ) {
			return base64.StdEncoding.EncodeToString(x)
		}
		return textValue(base, string(x), !utf8.Valid(x))
	case string:
		return textValue(base, x, false)
	}
	return v // bool, int types, uint64: JSON as they are
}

func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// textValue maps a value the driver gave as text: JSON columns become their JSON value, and
// bytes that are not UTF-8 base64.
func textValue(base, s string, binary bool) any {
	switch {
	case binary:
		return base64.StdEncoding.EncodeToString([]byte(s))
	case (base == "json" || base == "jsonb") && json.Valid([]byte(s)):
		return json.RawMessage(s)
	case base == "bool" || base == "boolean":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	}
	return s
}

package datasource

import (
	"net/url"
	"strings"
)

// The read-only check lexes a query the way its database would: comments, string literals and
// quoted identifiers are set aside, and only what is left (keywords, names, operators) is
// inspected. Where a database's lexing depends on a session setting (MySQL's ANSI_QUOTES and
// NO_BACKSLASH_ESCAPES, PostgreSQL's standard_conforming_strings) every reading is checked and
// the query must pass all of them, so a quote trick that hides a second statement in one
// reading is still caught by another.

type tokKind int

const (
	tWord   tokKind = iota // keyword or unquoted identifier
	tIdent                 // quoted identifier
	tString                // string literal (any quoting)
	tNumber
	tParam // $1
	tPunct // one operator or punctuation character
)

type token struct {
	kind tokKind
	text string // words and identifiers: the name; strings: the content; punctuation: the char
	pos  int    // byte offset in the query
}

func (t token) is(word string) bool { return t.kind == tWord && strings.EqualFold(t.text, word) }

func (t token) isPunct(p string) bool { return t.kind == tPunct && t.text == p }

// lexMode is one way of reading SQL.
type lexMode struct {
	backslashEscapes bool // '\'' escapes a quote inside '…'
	dqString         bool // "…" is a string (MySQL) rather than an identifier
	hashComment      bool // # starts a line comment (MySQL)
	dashNeedsSpace   bool // -- starts a comment only before whitespace (MySQL)
	nestedComments   bool // /* /* */ */ nests (PostgreSQL)
	dollarQuotes     bool // $tag$…$tag$ strings and $1 parameters (PostgreSQL)
	execComments     bool // /*! … */ is executed, not a comment (MySQL)
	eStrings         bool // E'…' takes backslash escapes (PostgreSQL)
	backticks        bool // `…` identifiers (MySQL, SQLite)
	brackets         bool // […] identifiers (SQLite)
}

// modes lists every reading of a data source type's SQL; the first is the usual one.
func modes(typ string) []lexMode {
	pg := lexMode{nestedComments: true, dollarQuotes: true, eStrings: true}
	pgOld := pg
	pgOld.backslashEscapes = true
	my := lexMode{backslashEscapes: true, dqString: true, hashComment: true, dashNeedsSpace: true, execComments: true, backticks: true}
	myNoBS := my
	myNoBS.backslashEscapes = false
	myANSI := my
	myANSI.dqString = false
	myANSINoBS := myANSI
	myANSINoBS.backslashEscapes = false
	lite := lexMode{backticks: true, brackets: true}
	switch typ {
	case "postgres":
		return []lexMode{pg, pgOld}
	case "mysql":
		return []lexMode{my, myNoBS, myANSI, myANSINoBS}
	case "sqlite":
		return []lexMode{lite}
	}
	return []lexMode{pg, pgOld, my, myNoBS, myANSI, myANSINoBS, lite}
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isWordChar(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' || c == '$' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// lex splits q into tokens, dropping whitespace and comments.
func lex(q string, m lexMode) ([]token, error) {
	var out []token
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case isSpace(c):
			i++
		case c == '-' && i+1 < len(q) && q[i+1] == '-' && (!m.dashNeedsSpace || i+2 >= len(q) || isSpace(q[i+2]) || q[i+2] < 0x20):
			i = lineEnd(q, i)
		case c == '#' && m.hashComment:
			i = lineEnd(q, i)
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			if m.execComments && (i+2 < len(q) && q[i+2] == '!' || i+3 < len(q) && q[i+2] == 'M' && q[i+3] == '!') {
				// MySQL (/*! … */) and MariaDB (/*M! … */) run the body, after an optional
				// version number, as SQL.
				i += 3
				if q[i-1] == 'M' {
					i++
				}
				for i < len(q) && q[i] >= '0' && q[i] <= '9' {
					i++
				}
				continue
			}
			end, err := commentEnd(q, i, m.nestedComments)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '*' && m.execComments && i+1 < len(q) && q[i+1] == '/':
			i += 2 // the end of a /*! … */ block
		case c == '\'':
			s, end, err := quoted(q, i, '\'', m.backslashEscapes)
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tString, text: s, pos: i})
			i = end
		case c == '"':
			s, end, err := quoted(q, i, '"', m.dqString && m.backslashEscapes)
			if err != nil {
				return nil, err
			}
			kind := tIdent
			if m.dqString {
				kind = tString
			}
			out = append(out, token{kind: kind, text: s, pos: i})
			i = end
		case c == '`' && m.backticks:
			s, end, err := quoted(q, i, '`', false)
			if err != nil {
				return nil, err
			}
			out = append(out, token{kind: tIdent, text: s, pos: i})
			i = end
		case c == '[' && m.brackets:
			end := strings.IndexByte(q[i+1:], ']')
			if end < 0 {
				return nil, fieldErr("query", "unterminated [identifier] starting at character %d", i+1)
			}
			out = append(out, token{kind: tIdent, text: q[i+1 : i+1+end], pos: i})
			i += end + 2
		case c == '$' && m.dollarQuotes:
			if i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' {
				j := i + 1
				for j < len(q) && q[j] >= '0' && q[j] <= '9' {
					j++
				}
				out = append(out, token{kind: tParam, text: q[i:j], pos: i})
				i = j
				continue
			}
			s, end, ok, err := dollarQuoted(q, i)
			if err != nil {
				return nil, err
			}
			if !ok {
				out = append(out, token{kind: tPunct, text: "$", pos: i})
				i++
				continue
			}
			out = append(out, token{kind: tString, text: s, pos: i})
			i = end
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9':
			j := i + 1
			for j < len(q) && (isWordChar(q[j]) && q[j] != '$' || q[j] == '.' ||
				(q[j] == '+' || q[j] == '-') && (q[j-1] == 'e' || q[j-1] == 'E')) {
				j++
			}
			out = append(out, token{kind: tNumber, text: q[i:j], pos: i})
			i = j
		case isWordStart(c):
			if m.eStrings && (c == 'e' || c == 'E') && i+1 < len(q) && q[i+1] == '\'' {
				s, end, err := quoted(q, i+1, '\'', true)
				if err != nil {
					return nil, err
				}
				out = append(out, token{kind: tString, text: s, pos: i})
				i = end
				continue
			}
			j := i + 1
			for j < len(q) && isWordChar(q[j]) {
				j++
			}
			out = append(out, token{kind: tWord, text: q[i:j], pos: i})
			i = j
		default:
			out = append(out, token{kind: tPunct, text: string(c), pos: i})
			i++
		}
	}
	return out, nil
}

func lineEnd(q string, i int) int {
	if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(q)
}

func commentEnd(q string, start int, nested bool) (int, error) {
	depth := 0
	for i := start; i+1 < len(q); {
		switch {
		case q[i] == '/' && q[i+1] == '*':
			if depth == 0 || nested {
				depth++
			}
			i += 2
		case q[i] == '*' && q[i+1] == '/':
			depth--
			i += 2
			if depth == 0 {
				return i, nil
			}
		default:
			i++
		}
	}
	return 0, fieldErr("query", "unterminated /* comment starting at character %d", start+1)
}

// quoted reads a literal opened by q[start] == quote; a doubled quote is an escaped one, and
// so is a backslash-quote when backslash escapes are on.
func quoted(q string, start int, quote byte, backslash bool) (string, int, error) {
	var b strings.Builder
	for i := start + 1; i < len(q); i++ {
		c := q[i]
		switch {
		case backslash && c == '\\' && i+1 < len(q):
			b.WriteByte(q[i+1])
			i++
		case c == quote && i+1 < len(q) && q[i+1] == quote:
			b.WriteByte(quote)
			i++
		case c == quote:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(c)
		}
	}
	what := "string"
	if quote != '\'' {
		what = "quoted name"
	}
	return "", 0, fieldErr("query", "unterminated %s starting at character %d", what, start+1)
}

// dollarQuoted reads a PostgreSQL $tag$…$tag$ string; ok is false when q[start] does not open one.
func dollarQuoted(q string, start int) (string, int, bool, error) {
	j := start + 1
	for j < len(q) && (isWordChar(q[j]) && q[j] != '$') {
		j++
	}
	if j >= len(q) || q[j] != '$' || (j > start+1 && q[start+1] >= '0' && q[start+1] <= '9') {
		return "", 0, false, nil
	}
	tag := q[start : j+1]
	end := strings.Index(q[j+1:], tag)
	if end < 0 {
		return "", 0, false, fieldErr("query", "unterminated %s string starting at character %d", tag, start+1)
	}
	return q[j+1 : j+1+end], j + 1 + end + len(tag), true, nil
}

// writeWords are keywords that make a statement write, change the schema or the session, or
// leave the database; none may appear outside literals in a data source query.
var writeWords = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true, "DROP": true,
	"ALTER": true, "CREATE": true, "TRUNCATE": true, "GRANT": true, "REVOKE": true, "COPY": true,
	"INTO": true, "ATTACH": true, "DETACH": true, "PRAGMA": true, "VACUUM": true, "REINDEX": true,
	"CALL": true, "EXEC": true, "EXECUTE": true, "PREPARE": true, "DEALLOCATE": true, "LOCK": true,
	"UNLOCK": true, "RENAME": true, "LISTEN": true, "NOTIFY": true, "REFRESH": true,
	"OUTFILE": true, "DUMPFILE": true,
}

// unsafeFuncs are functions with side effects (sleeping, locking, files, sequences, running
// other SQL) that a read-only query must not call.
var unsafeFuncs = map[string]bool{
	"PG_SLEEP": true, "PG_SLEEP_FOR": true, "PG_SLEEP_UNTIL": true, "PG_TERMINATE_BACKEND": true,
	"PG_CANCEL_BACKEND": true, "PG_RELOAD_CONF": true, "PG_ROTATE_LOGFILE": true, "PG_PROMOTE": true,
	"SET_CONFIG": true, "PG_ADVISORY_LOCK": true, "PG_ADVISORY_XACT_LOCK": true, "PG_TRY_ADVISORY_LOCK": true,
	"PG_ADVISORY_LOCK_SHARED": true, "LO_IMPORT": true, "LO_EXPORT": true, "LO_UNLINK": true, "LO_CREATE": true,
	"LO_FROM_BYTEA": true, "LO_PUT": true, "PG_READ_FILE": true, "PG_READ_BINARY_FILE": true, "PG_LS_DIR": true,
	"PG_STAT_FILE": true, "DBLINK": true, "DBLINK_EXEC": true, "NEXTVAL": true, "SETVAL": true,
	"PG_SWITCH_WAL": true, "PG_CREATE_RESTORE_POINT": true, "PG_LOGICAL_EMIT_MESSAGE": true,
	"QUERY_TO_XML": true, "QUERY_TO_XMLSCHEMA": true, "QUERY_TO_XML_AND_XMLSCHEMA": true, "CURSOR_TO_XML": true,
	"PG_CREATE_LOGICAL_REPLICATION_SLOT": true, "PG_DROP_REPLICATION_SLOT": true,
	"SLEEP": true, "BENCHMARK": true, "LOAD_FILE": true, "GET_LOCK": true, "RELEASE_LOCK": true,
	"RELEASE_ALL_LOCKS": true, "MASTER_POS_WAIT": true, "SOURCE_POS_WAIT": true,
	"LOAD_EXTENSION": true, "WRITEFILE": true, "READFILE": true, "EDIT": true, "FTS3_TOKENIZER": true,
}

// CheckSQL accepts exactly one read-only SELECT (or WITH … SELECT) statement for a SQL data
// source of type typ, and returns a *FieldError naming "query" otherwise.
func CheckSQL(typ, query string) error {
	if len(query) > maxQueryBytes {
		return fieldErr("query", "must be at most %d bytes", maxQueryBytes)
	}
	for _, m := range modes(typ) {
		toks, err := lex(query, m)
		if err != nil {
			return err
		}
		if err := checkTokens(toks); err != nil {
			return err
		}
	}
	return nil
}

const maxQueryBytes = 100000

// statement returns the tokens of the single statement, without trailing semicolons.
func statement(toks []token) ([]token, error) {
	end := len(toks)
	for i, t := range toks {
		if t.isPunct(";") {
			for _, rest := range toks[i+1:] {
				if !rest.isPunct(";") {
					return nil, fieldErr("query", "must be a single statement; found more after the ';' at character %d", t.pos+1)
				}
			}
			end = i
			break
		}
	}
	if end == 0 {
		return nil, fieldErr("query", "is empty: give one SELECT statement")
	}
	return toks[:end], nil
}

func checkTokens(all []token) error {
	toks, err := statement(all)
	if err != nil {
		return err
	}
	depth := 0
	for _, t := range toks {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
			if depth < 0 {
				return fieldErr("query", "has an unmatched ')' at character %d", t.pos+1)
			}
		}
	}
	if depth != 0 {
		return fieldErr("query", "has an unclosed '('")
	}
	first := toks[0]
	for i := 0; i < len(toks) && toks[i].isPunct("("); i++ {
		first = toks[i+1]
	}
	if !first.is("SELECT") && !first.is("WITH") {
		return fieldErr("query", "must be a read-only SELECT (or WITH … SELECT) statement, not %s", strings.ToUpper(first.text))
	}
	for i, t := range toks {
		if t.kind != tWord {
			continue
		}
		up := strings.ToUpper(t.text)
		next := token{kind: -1}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case writeWords[up]:
			return fieldErr("query", "must be read-only; %s is not allowed (character %d)", up, t.pos+1)
		case up == "REPLACE" && !next.isPunct("("):
			return fieldErr("query", "must be read-only; REPLACE is not allowed (character %d)", t.pos+1)
		case up == "FOR" && (next.is("SHARE") || next.is("NO") || next.is("KEY")):
			return fieldErr("query", "must not lock rows (FOR %s at character %d)", strings.ToUpper(next.text), t.pos+1)
		case unsafeFuncs[up] && next.isPunct("("):
			return fieldErr("query", "must not call %s(): it has side effects", strings.ToLower(up))
		}
	}
	return nil
}

// CheckPath accepts the query of an HTTP data source: a path relative to the source's
// base_url with an optional query string ("/products?category=tea").
func CheckPath(query string) (*url.URL, error) {
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return nil, fieldErr("query", "is required: give a path such as /items?limit=10")
	case len(q) > 2048:
		return nil, fieldErr("query", "must be at most 2048 characters")
	case !strings.HasPrefix(q, "/") || strings.HasPrefix(q, "//"):
		return nil, fieldErr("query", "must be a path starting with / relative to the data source's base_url, e.g. /items?limit=10")
	case strings.ContainsAny(q, "\\\x00\r\n\t "):
		return nil, fieldErr("query", "must not contain spaces, backslashes or control characters")
	}
	u, err := url.Parse(q)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return nil, fieldErr("query", "must be a path relative to the data source's base_url")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == ".." || seg == "." {
			return nil, fieldErr("query", "must not contain . or .. path segments")
		}
	}
	return u, nil
}

// Check validates a query for a data source of type typ without running it.
func Check(typ, query string) error {
	if typ == "http" {
		_, err := CheckPath(query)
		return err
	}
	return CheckSQL(typ, query)
}

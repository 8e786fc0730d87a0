package datasource

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The emulator answers data source queries with mock result sets shaped like the real thing:
// the statement is parsed far enough to know which configured tables it reads, which columns
// it selects (with aliases, qualified names, * and t.*, aggregates and literals), and its
// LIMIT/OFFSET; WHERE, GROUP BY and ORDER BY are accepted but do not filter or sort. Values are
// a pure function of (table, column, row), so the same query always returns the same rows.

// Column names and types one column of a result set.
type Column struct {
	Name string
	Type string
}

// Result is a query's result set, already cut to the row bound.
type Result struct {
	Columns   []Column
	Rows      [][]any
	Truncated bool
}

// Request is one query against a data source.
type Request struct {
	Query  string
	Params any // nil, []any (positional: $1, ?) or map[string]any (named)
	Limit  int // 0 means the config's max_rows
}

// RowBound returns how many rows a query may return: the request's limit, which must not
// exceed the config's max_rows, or max_rows itself.
func RowBound(cfg *Config, limit int) (int, error) {
	switch {
	case limit < 0 || limit > cfg.MaxRows:
		return 0, fieldErr("limit", "must be from 1 to %d (the data source's max_rows)", cfg.MaxRows)
	case limit == 0:
		return cfg.MaxRows, nil
	}
	return limit, nil
}

// Mock answers req with deterministic mock rows; a *FieldError names the request field at
// fault ("query", "params" or "limit").
func Mock(cfg *Config, req Request) (*Result, error) {
	bound, err := RowBound(cfg, req.Limit)
	if err != nil {
		return nil, err
	}
	if err := Check(cfg.Type, req.Query); err != nil {
		return nil, err
	}
	var rel *relation
	if cfg.Type == "http" {
		rel, err = mockHTTP(cfg, req)
	} else {
		rel, err = mockSQL(cfg, req)
	}
	if err != nil {
		return nil, err
	}
	n := rel.rows
	res := &Result{Columns: make([]Column, len(rel.cols)), Rows: make([][]any, 0, min(n, bound))}
	if n > bound {
		n, res.Truncated = bound, true
	}
	for i, c := range rel.cols {
		res.Columns[i] = Column{Name: c.name, Type: c.typ}
	}
	for i := range n {
		row := make([]any, len(rel.cols))
		for j, c := range rel.cols {
			row[j] = c.value(i)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// relation is a mock row set: its columns compute their value for row i in [0, rows).
type relation struct {
	cols []*column
	rows int
}

type column struct {
	name, typ string
	value     func(i int) any
}

// binding is one FROM item as the select list sees it.
type binding struct {
	name  string // the alias, or the table's name
	table string
	rel   *relation
}

type mocker struct {
	cfg    *Config
	params []any
	qmarks map[int]int // byte offset of each ? placeholder → its 0-based index
	ctes   map[string]*relation
}

func mockSQL(cfg *Config, req Request) (*relation, error) {
	toks, err := lex(req.Query, modes(cfg.Type)[0])
	if err != nil {
		return nil, err
	}
	stmt, err := statement(toks)
	if err != nil {
		return nil, err
	}
	m := &mocker{cfg: cfg, qmarks: map[int]int{}, ctes: map[string]*relation{}}
	if err := m.bindParams(stmt, req.Params); err != nil {
		return nil, err
	}
	return m.query(stmt)
}

// bindParams checks that positional parameters the statement uses are supplied.
func (m *mocker) bindParams(stmt []token, params any) error {
	list, isList := params.([]any)
	if isList {
		m.params = list
	}
	highest := 0
	for _, t := range stmt {
		switch {
		case t.kind == tParam:
			n, _ := strconv.Atoi(t.text[1:])
			highest = max(highest, n)
		case t.isPunct("?"):
			m.qmarks[t.pos] = len(m.qmarks)
			highest = max(highest, len(m.qmarks))
		}
	}
	if highest > 0 && params != nil && !isList {
		return fieldErr("params", "must be an array: the query uses positional parameters")
	}
	if highest > len(m.params) {
		return fieldErr("params", "the query uses %d positional parameter(s) but %d were given", highest, len(m.params))
	}
	return nil
}

// query reads [WITH …] SELECT ….
func (m *mocker) query(toks []token) (*relation, error) {
	if len(toks) == 0 {
		return nil, fieldErr("query", "has an empty subquery")
	}
	if toks[0].is("WITH") {
		rest, err := m.with(toks)
		if err != nil {
			return nil, err
		}
		toks = rest
	}
	return m.selectStmt(toks)
}

// with registers the common table expressions and returns the tokens of the main statement.
func (m *mocker) with(toks []token) ([]token, error) {
	i := 1
	if i < len(toks) && toks[i].is("RECURSIVE") {
		i++
	}
	for {
		if i >= len(toks) || (toks[i].kind != tWord && toks[i].kind != tIdent) {
			return nil, fieldErr("query", "expected a name after WITH")
		}
		name := toks[i].text
		i++
		var names []string
		if i < len(toks) && toks[i].isPunct("(") {
			j := closing(toks, i)
			for _, part := range splitTop(toks[i+1 : j]) {
				if len(part) > 0 {
					names = append(names, part[0].text)
				}
			}
			i = j + 1
		}
		if i >= len(toks) || !toks[i].is("AS") {
			return nil, fieldErr("query", "expected AS after WITH %s", name)
		}
		i++
		for i < len(toks) && (toks[i].is("NOT") || toks[i].is("MATERIALIZED")) {
			i++
		}
		if i >= len(toks) || !toks[i].isPunct("(") {
			return nil, fieldErr("query", "expected ( after WITH %s AS", name)
		}
		j := closing(toks, i)
		rel, err := m.query(toks[i+1 : j])
		if err != nil {
			return nil, err
		}
		m.ctes[strings.ToLower(name)] = rename(rel, names)
		i = j + 1
		if i < len(toks) && toks[i].isPunct(",") {
			i++
			continue
		}
		return toks[i:], nil
	}
}

// selectStmt reads one SELECT, or a parenthesised query, with its LIMIT and OFFSET.
func (m *mocker) selectStmt(toks []token) (*relation, error) {
	if len(toks) == 0 {
		return nil, fieldErr("query", "expected SELECT")
	}
	if toks[0].isPunct("(") {
		j := closing(toks, 0)
		rel, err := m.query(toks[1:j])
		if err != nil {
			return nil, err
		}
		cl := splitClauses(toks[j+1:], true)
		return m.window(rel, cl)
	}
	if !toks[0].is("SELECT") {
		return nil, fieldErr("query", "expected SELECT, found %q", toks[0].text)
	}
	cl := splitClauses(toks[1:], false)
	var scope []binding
	base := 1 // a SELECT without FROM yields one row
	if cl.from != nil {
		var err error
		if scope, err = m.from(cl.from); err != nil {
			return nil, err
		}
		base = scope[0].rel.rows
	}
	out := &relation{rows: base}
	aggregate := false
	for _, item := range splitTop(stripSelectModifiers(cl.list)) {
		cols, agg, err := m.selectItem(item, scope, base, cl.grouped)
		if err != nil {
			return nil, err
		}
		aggregate = aggregate || agg
		out.cols = append(out.cols, cols...)
	}
	if len(out.cols) == 0 {
		return nil, fieldErr("query", "selects no columns")
	}
	switch {
	case cl.grouped:
		out.rows = min(base, 5)
	case aggregate:
		out.rows = 1
	}
	return m.window(out, cl)
}

// clauses are the parts of one SELECT that the mock reads.
type clauses struct {
	list, from    []token
	grouped       bool
	limit, offset []token
	fetch         []token
}

// splitClauses cuts a SELECT (after the keyword) at its top-level clause keywords. After a
// UNION/INTERSECT/EXCEPT only the trailing ORDER BY, LIMIT, OFFSET and FETCH matter: the
// first SELECT decides the columns. tail says toks hold only such trailing clauses.
func splitClauses(toks []token, tail bool) clauses {
	var cl clauses
	cur := "list"
	if tail {
		cur = "skip"
	}
	compound := false
	depth := 0
	seg := map[string][]token{}
	for i, t := range toks {
		if t.isPunct("(") {
			depth++
		} else if t.isPunct(")") {
			depth--
		}
		if depth == 0 && t.kind == tWord {
			prev := token{kind: -1}
			if i > 0 {
				prev = toks[i-1]
			}
			switch kw := strings.ToUpper(t.text); kw {
			case "FROM":
				// "a IS [NOT] DISTINCT FROM b" is an operator, not the FROM clause.
				if cur == "list" && !(prev.is("DISTINCT") && i > 1 && (toks[i-2].is("IS") || toks[i-2].is("NOT"))) {
					cur = "from"
					seg[cur] = []token{}
					continue
				}
			case "WHERE", "HAVING", "WINDOW", "QUALIFY", "ORDER":
				cur = "skip"
				continue
			case "GROUP":
				if !prev.is("WITHIN") {
					cl.grouped = cl.grouped || !compound
					cur = "skip"
					continue
				}
			case "LIMIT", "OFFSET", "FETCH":
				cur = strings.ToLower(kw)
				seg[cur] = []token{} // the last one counts
				continue
			case "UNION", "INTERSECT", "EXCEPT", "MINUS":
				compound = true
				cur = "skip"
				continue
			}
		}
		seg[cur] = append(seg[cur], t)
	}
	cl.list, cl.from = seg["list"], seg["from"]
	cl.limit, cl.offset, cl.fetch = seg["limit"], seg["offset"], seg["fetch"]
	return cl
}

// stripSelectModifiers drops DISTINCT [ON (…)], ALL and MySQL's select options.
func stripSelectModifiers(list []token) []token {
	for len(list) > 0 {
		switch {
		case list[0].is("DISTINCT") && len(list) > 1 && list[1].is("ON") && len(list) > 2 && list[2].isPunct("("):
			list = list[closing(list, 2)+1:]
		case list[0].is("DISTINCT"), list[0].is("ALL"), list[0].is("DISTINCTROW"), list[0].is("HIGH_PRIORITY"),
			list[0].is("STRAIGHT_JOIN"), list[0].is("SQL_NO_CACHE"), list[0].is("SQL_CALC_FOUND_ROWS"),
			list[0].is("SQL_SMALL_RESULT"), list[0].is("SQL_BIG_RESULT"), list[0].is("SQL_BUFFER_RESULT"):
			list = list[1:]
		default:
			return list
		}
	}
	return list
}

// window applies LIMIT/OFFSET/FETCH to a relation.
func (m *mocker) window(rel *relation, cl clauses) (*relation, error) {
	limit, offset := -1, 0
	switch {
	case len(cl.limit) == 3 && cl.limit[1].isPunct(","): // MySQL: LIMIT offset, count
		offset, limit = m.intArg(cl.limit[0:1], 0), m.intArg(cl.limit[2:3], -1)
	case len(cl.limit) > 0:
		limit = m.intArg(cl.limit, -1)
	}
	if len(cl.offset) > 0 {
		offset = m.intArg(cl.offset, 0)
	}
	if len(cl.fetch) > 0 { // FETCH FIRST [n] ROW[S] ONLY
		f := cl.fetch
		if len(f) > 1 && (f[1].kind == tNumber || f[1].kind == tParam || f[1].isPunct("?")) {
			limit = m.intArg(f[1:2], 1)
		} else {
			limit = 1
		}
	}
	n := max(rel.rows-offset, 0)
	if limit >= 0 && n > limit {
		n = limit
	}
	if offset == 0 {
		return &relation{cols: rel.cols, rows: n}, nil
	}
	out := &relation{rows: n}
	for _, c := range rel.cols {
		v := c.value
		out.cols = append(out.cols, &column{name: c.name, typ: c.typ, value: func(i int) any { return v(i + offset) }})
	}
	return out, nil
}

// intArg reads a non-negative integer literal or bound parameter; anything else gives def.
func (m *mocker) intArg(toks []token, def int) int {
	if len(toks) == 0 {
		return def
	}
	t := toks[0]
	var v any
	switch {
	case t.kind == tNumber:
		v = t.text
	case t.kind == tParam:
		if n, _ := strconv.Atoi(t.text[1:]); n >= 1 && n <= len(m.params) {
			v = m.params[n-1]
		}
	case t.isPunct("?"):
		if n, ok := m.qmarks[t.pos]; ok && n < len(m.params) {
			v = m.params[n]
		}
	}
	switch x := v.(type) {
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 0 {
			return n
		}
	case float64:
		if x >= 0 && x == math.Trunc(x) && x <= math.MaxInt32 {
			return int(x)
		}
	}
	return def
}

var joinWords = map[string]bool{"JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "OUTER": true,
	"CROSS": true, "NATURAL": true, "STRAIGHT_JOIN": true}

// notAlias are words that may follow a table name without being its alias.
var notAlias = map[string]bool{"ON": true, "USING": true, "WHERE": true, "LATERAL": true, "TABLESAMPLE": true,
	"USE": true, "FORCE": true, "IGNORE": true, "WITH": true, "AS": true, "ONLY": true, "INDEXED": true, "NOT": true}

func isJoinWord(toks []token, i int) bool {
	return toks[i].kind == tWord && joinWords[strings.ToUpper(toks[i].text)] && (i+1 >= len(toks) || !toks[i+1].isPunct("("))
}

// from binds the FROM items: tables of the config, common table expressions and subqueries.
func (m *mocker) from(toks []token) ([]binding, error) {
	var out []binding
	i := 0
	for i < len(toks) {
		for i < len(toks) && (isJoinWord(toks, i) || toks[i].is("LATERAL") || toks[i].is("ONLY") || toks[i].isPunct(",")) {
			i++
		}
		if i >= len(toks) {
			break
		}
		var b binding
		if toks[i].isPunct("(") {
			j := closing(toks, i)
			inner := toks[i+1 : j]
			if len(inner) == 0 || !(inner[0].is("SELECT") || inner[0].is("WITH") || inner[0].isPunct("(")) {
				return nil, fieldErr("query", "the emulator mocks only tables, common table expressions and subqueries in FROM")
			}
			rel, err := m.query(inner)
			if err != nil {
				return nil, err
			}
			b = binding{name: "subquery", table: "subquery", rel: rel}
			i = j + 1
		} else {
			if toks[i].kind != tWord && toks[i].kind != tIdent {
				return nil, fieldErr("query", "expected a table name in FROM, found %q", toks[i].text)
			}
			parts := []token{toks[i]}
			i++
			for i+1 < len(toks) && toks[i].isPunct(".") && (toks[i+1].kind == tWord || toks[i+1].kind == tIdent) {
				parts = append(parts, toks[i+1])
				i += 2
			}
			if i < len(toks) && toks[i].isPunct("(") {
				return nil, fieldErr("query", "the emulator cannot mock the table function %s(); query a table from config.tables", parts[len(parts)-1].text)
			}
			rel, name, err := m.table(parts)
			if err != nil {
				return nil, err
			}
			b = binding{name: name, table: name, rel: rel}
		}
		switch {
		case i+1 < len(toks) && toks[i].is("AS"):
			b.name = toks[i+1].text
			i += 2
		case i < len(toks) && (toks[i].kind == tIdent || toks[i].kind == tWord && !notAlias[strings.ToUpper(toks[i].text)] && !isJoinWord(toks, i)):
			b.name = toks[i].text
			i++
		}
		if i < len(toks) && toks[i].isPunct("(") { // column aliases: AS t (a, b)
			j := closing(toks, i)
			var names []string
			for _, part := range splitTop(toks[i+1 : j]) {
				if len(part) > 0 {
					names = append(names, part[0].text)
				}
			}
			b.rel = rename(b.rel, names)
			i = j + 1
		}
		out = append(out, b)
		// Skip ON/USING conditions, index hints and the like up to the next FROM item.
		depth := 0
		for i < len(toks) {
			t := toks[i]
			if t.isPunct("(") {
				depth++
			} else if t.isPunct(")") {
				depth--
			}
			if depth == 0 && (t.isPunct(",") || isJoinWord(toks, i)) {
				break
			}
			i++
		}
	}
	if len(out) == 0 {
		return nil, fieldErr("query", "FROM names no table")
	}
	return out, nil
}

// table finds a configured table (or a common table expression) by its possibly
// schema-qualified name.
func (m *mocker) table(parts []token) (*relation, string, error) {
	last := parts[len(parts)-1]
	if len(parts) == 1 {
		if rel, ok := m.ctes[strings.ToLower(last.text)]; ok {
			return rel, last.text, nil
		}
	}
	var found *Table
	for i := range m.cfg.Tables {
		t := &m.cfg.Tables[i]
		if t.Name == last.text {
			found = t
			break
		}
		if found == nil && last.kind == tWord && strings.EqualFold(t.Name, last.text) {
			found = t
		}
	}
	if found == nil {
		full := make([]string, len(parts))
		for i, p := range parts {
			full[i] = p.text
		}
		return nil, "", fieldErr("query", "table %q is not in this data source's config.tables; known tables: %s",
			strings.Join(full, "."), m.cfg.tableNames())
	}
	rel := &relation{rows: found.RowCount}
	for _, f := range found.Columns {
		rel.cols = append(rel.cols, &column{name: f.Name, typ: f.Type, value: generator(found.Name, f)})
	}
	return rel, found.Name, nil
}

var aggregates = map[string]bool{"COUNT": true, "SUM": true, "AVG": true, "MIN": true, "MAX": true}

// constants are the bare words that are values, not columns.
var constants = map[string]string{
	"CURRENT_DATE": "date", "CURRENT_TIMESTAMP": "timestamptz", "CURRENT_TIME": "timetz", "LOCALTIME": "time",
	"LOCALTIMESTAMP": "timestamp", "CURRENT_USER": "text", "SESSION_USER": "text", "NULL": "unknown",
	"TRUE": "boolean", "FALSE": "boolean",
}

// aliasStop are words that end an expression rather than name it.
var aliasStop = map[string]bool{"AND": true, "OR": true, "NOT": true, "IS": true, "NULL": true, "TRUE": true,
	"FALSE": true, "END": true, "ELSE": true, "THEN": true, "WHEN": true, "CASE": true, "DISTINCT": true,
	"IN": true, "LIKE": true, "ILIKE": true, "BETWEEN": true, "ASC": true, "DESC": true, "AS": true}

// selectItem turns one select-list item into output columns; agg reports an aggregate.
func (m *mocker) selectItem(item []token, scope []binding, base int, grouped bool) ([]*column, bool, error) {
	if len(item) == 0 {
		return nil, false, fieldErr("query", "has an empty item in the select list")
	}
	expr, alias := item, ""
	n := len(item)
	switch {
	case n >= 3 && item[n-2].is("AS"):
		expr, alias = item[:n-2], item[n-1].text
	case n >= 2 && (item[n-1].kind == tIdent || item[n-1].kind == tWord && !aliasStop[strings.ToUpper(item[n-1].text)]) &&
		!item[n-2].isPunct(".") && (item[n-2].kind != tPunct || item[n-2].isPunct(")")):
		expr, alias = item[:n-1], item[n-1].text
	}
	named := func(c *column) *column {
		if alias != "" {
			c.name = alias
		}
		return c
	}
	// * and t.*
	if len(expr) == 1 && expr[0].isPunct("*") {
		if len(scope) == 0 {
			return nil, false, fieldErr("query", "SELECT * needs a FROM clause")
		}
		var cols []*column
		for _, b := range scope {
			cols = append(cols, b.rel.cols...)
		}
		return cols, false, nil
	}
	if len(expr) == 3 && expr[1].isPunct(".") && expr[2].isPunct("*") {
		b, err := findBinding(scope, expr[0].text)
		if err != nil {
			return nil, false, err
		}
		return b.rel.cols, false, nil
	}
	// Column references, plain or qualified.
	if ref, ok := columnRef(expr); ok {
		if typ, isConst := constants[strings.ToUpper(ref[0].text)]; isConst && len(ref) == 1 && ref[0].kind == tWord {
			return []*column{named(constColumn(ref[0].text, typ))}, false, nil
		}
		c, err := resolve(scope, ref)
		if err != nil {
			return nil, false, err
		}
		return []*column{named(&column{name: c.name, typ: c.typ, value: c.value})}, false, nil
	}
	// Literals.
	if lit, typ, ok := literal(expr); ok {
		return []*column{named(&column{name: "?column?", typ: typ, value: func(int) any { return lit }})}, false, nil
	}
	// Aggregates: count/sum/avg/min/max(…) [FILTER (…)] [OVER (…)].
	if len(expr) >= 3 && expr[0].kind == tWord && aggregates[strings.ToUpper(expr[0].text)] && expr[1].isPunct("(") {
		j := closing(expr, 1)
		rest := expr[j+1:]
		if len(rest) >= 2 && rest[0].is("FILTER") && rest[1].isPunct("(") {
			rest = rest[closing(rest, 1)+1:]
		}
		window := len(rest) >= 2 && rest[0].is("OVER")
		if len(rest) == 0 || window {
			c, err := m.aggregate(strings.ToLower(expr[0].text), expr[2:j], scope, base, grouped)
			if err != nil {
				return nil, false, err
			}
			return []*column{named(c)}, !window, nil
		}
	}
	return []*column{named(expression(expr, scope))}, false, nil
}

// columnRef reports whether expr is a (possibly qualified) column name.
func columnRef(expr []token) ([]token, bool) {
	for i, t := range expr {
		if i%2 == 0 && t.kind != tWord && t.kind != tIdent || i%2 == 1 && !t.isPunct(".") {
			return nil, false
		}
	}
	if len(expr)%2 == 0 {
		return nil, false
	}
	var ref []token
	for i := 0; i < len(expr); i += 2 {
		ref = append(ref, expr[i])
	}
	return ref, true
}

func constColumn(word, typ string) *column {
	name := strings.ToLower(word)
	if typ == "unknown" {
		name = "?column?"
	}
	return &column{name: name, typ: typ, value: func(int) any {
		switch strings.ToUpper(word) {
		case "NULL":
			return nil
		case "TRUE":
			return true
		case "FALSE":
			return false
		case "CURRENT_USER", "SESSION_USER":
			return "agentplane_ro"
		}
		return formatTime(mockEpoch, typ)
	}}
}

func literal(expr []token) (any, string, bool) {
	neg := false
	if len(expr) == 2 && expr[0].isPunct("-") {
		neg, expr = true, expr[1:]
	}
	if len(expr) != 1 {
		return nil, "", false
	}
	switch t := expr[0]; t.kind {
	case tString:
		if neg {
			return nil, "", false
		}
		return t.text, "text", true
	case tNumber:
		if n, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			if neg {
				n = -n
			}
			return n, "integer", true
		}
		if f, err := strconv.ParseFloat(t.text, 64); err == nil {
			if neg {
				f = -f
			}
			return f, "numeric", true
		}
	}
	return nil, "", false
}

func findBinding(scope []binding, name string) (*binding, error) {
	for i := range scope {
		if strings.EqualFold(scope[i].name, name) {
			return &scope[i], nil
		}
	}
	for i := range scope {
		if strings.EqualFold(scope[i].table, name) {
			return &scope[i], nil
		}
	}
	names := make([]string, len(scope))
	for i, b := range scope {
		names[i] = b.name
	}
	if len(scope) == 0 {
		return nil, fieldErr("query", "%q is not a table of the query: it has no FROM clause", name)
	}
	return nil, fieldErr("query", "%q is not a table or alias of the FROM clause (%s)", name, strings.Join(names, ", "))
}

// resolve finds the column a reference names: the last part is the column, the one before
// it (if any) the table or alias.
func resolve(scope []binding, ref []token) (*column, error) {
	name := ref[len(ref)-1].text
	if len(ref) > 1 {
		b, err := findBinding(scope, ref[len(ref)-2].text)
		if err != nil {
			return nil, err
		}
		if c := findColumn(b.rel, name); c != nil {
			return c, nil
		}
		return nil, fieldErr("query", "column %q does not exist in %s; its columns: %s", name, b.table, columnNames(b.rel))
	}
	for _, b := range scope {
		if c := findColumn(b.rel, name); c != nil {
			return c, nil
		}
	}
	switch len(scope) {
	case 0:
		return nil, fieldErr("query", "column %q does not exist: the query has no FROM clause", name)
	case 1:
		return nil, fieldErr("query", "column %q does not exist in %s; its columns: %s", name, scope[0].table, columnNames(scope[0].rel))
	}
	tables := make([]string, len(scope))
	for i, b := range scope {
		tables[i] = b.table
	}
	return nil, fieldErr("query", "column %q does not exist in any table of the FROM clause (%s)", name, strings.Join(tables, ", "))
}

func findColumn(rel *relation, name string) *column {
	for _, c := range rel.cols {
		if c.name == name {
			return c
		}
	}
	for _, c := range rel.cols {
		if strings.EqualFold(c.name, name) {
			return c
		}
	}
	return nil
}

func columnNames(rel *relation) string {
	names := make([]string, len(rel.cols))
	for i, c := range rel.cols {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// aggregate mocks count/sum/avg/min/max. Without GROUP BY the value is computed over every
// row of the FROM relation, so count(*) agrees with the rows SELECT * would give.
func (m *mocker) aggregate(fn string, args []token, scope []binding, base int, grouped bool) (*column, error) {
	if len(args) > 0 && args[0].is("DISTINCT") {
		args = args[1:]
	}
	var src *column
	if ref, ok := columnRef(args); ok {
		c, err := resolve(scope, ref)
		if err != nil {
			return nil, err
		}
		src = c
	} else if len(args) > 0 && !(len(args) == 1 && (args[0].isPunct("*") || args[0].kind == tNumber)) {
		src = firstColumn(args, scope)
	}
	c := &column{name: fn}
	switch fn {
	case "count":
		c.typ = "bigint"
	case "avg":
		c.typ = "numeric"
	case "sum":
		c.typ = "numeric"
		if src != nil && typeClass(src.typ) == "int" {
			c.typ = "bigint"
		}
	default:
		c.typ = "unknown"
		if src != nil {
			c.typ = src.typ
		}
	}
	if grouped {
		c.value = func(i int) any {
			if fn == "count" || src == nil {
				return int64(1 + hash("count", fn, i)%20)
			}
			return src.value(i)
		}
		return c, nil
	}
	var val any
	computed := false
	c.value = func(int) any {
		if !computed {
			val, computed = fold(fn, src, base), true
		}
		return val
	}
	return c, nil
}

// fold computes an aggregate over rows [0, n) of src (every row for count(*)).
func fold(fn string, src *column, n int) any {
	if src == nil {
		if fn == "count" {
			return int64(n)
		}
		return nil
	}
	var count int64
	var sum float64
	allInt := true
	var best any
	for i := range n {
		v := src.value(i)
		if v == nil {
			continue
		}
		count++
		f, isNum := toFloat(v)
		if isNum {
			sum += f
			if _, isInt := v.(int64); !isInt {
				allInt = false
			}
		}
		if best == nil || (fn == "min") == less(v, best) && !equal(v, best) {
			best = v
		}
	}
	switch fn {
	case "count":
		return count
	case "sum":
		if count == 0 {
			return nil
		}
		if allInt {
			return int64(sum)
		}
		return math.Round(sum*100) / 100
	case "avg":
		if count == 0 {
			return nil
		}
		return math.Round(sum/float64(count)*100) / 100
	}
	return best
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func less(a, b any) bool {
	fa, okA := toFloat(a)
	fb, okB := toFloat(b)
	if okA && okB {
		return fa < fb
	}
	return fmt.Sprint(a) < fmt.Sprint(b)
}

func equal(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// firstColumn finds the first column an expression mentions, if any.
func firstColumn(expr []token, scope []binding) *column {
	for i, t := range expr {
		if t.kind != tWord && t.kind != tIdent || i > 0 && (expr[i-1].isPunct(".") || expr[i-1].isPunct(":")) {
			continue
		}
		if i+1 < len(expr) && expr[i+1].isPunct("(") {
			continue
		}
		ref := []token{t}
		if i+2 < len(expr) && expr[i+1].isPunct(".") && (expr[i+2].kind == tWord || expr[i+2].kind == tIdent) {
			ref = append(ref, expr[i+2])
		}
		if c, err := resolve(scope, ref); err == nil {
			return c
		}
	}
	return nil
}

// expression mocks any other select item from the first column it mentions: a cast, a
// function of a column, arithmetic. It is named the way PostgreSQL names it.
func expression(expr []token, scope []binding) *column {
	src := firstColumn(expr, scope)
	c := &column{name: "?column?", typ: "text"}
	switch {
	case expr[0].is("CAST") && src != nil:
		c.name = src.name
	case expr[0].kind == tWord && len(expr) > 1 && expr[1].isPunct("("):
		c.name = strings.ToLower(expr[0].text)
	case expr[0].is("CASE"):
		c.name = "case"
	case src != nil && len(expr) > 1 && expr[1].isPunct(":"):
		c.name = src.name
	}
	if src != nil {
		c.typ = src.typ
	}
	for i := 0; i+2 < len(expr); i++ { // x::type and CAST(x AS type) give the type
		if expr[i].isPunct(":") && expr[i+1].isPunct(":") && expr[i+2].kind == tWord {
			c.typ = strings.ToLower(expr[i+2].text)
		}
		if expr[i].is("AS") && expr[i+1].kind == tWord && expr[i+2].isPunct(")") {
			c.typ = strings.ToLower(expr[i+1].text)
		}
	}
	switch {
	case src != nil:
		c.value = src.value
	case typeClass(c.typ) == "int":
		c.value = func(i int) any { return int64(i + 1) }
	default:
		name := c.name
		c.value = func(i int) any { return fmt.Sprintf("%s %d", strings.Trim(name, "?"), i+1) }
	}
	return c
}

// rename gives a relation's columns new names (a CTE's or alias's column list).
func rename(rel *relation, names []string) *relation {
	if len(names) == 0 {
		return rel
	}
	out := &relation{rows: rel.rows}
	for i, c := range rel.cols {
		nc := *c
		if i < len(names) {
			nc.name = names[i]
		}
		out.cols = append(out.cols, &nc)
	}
	return out
}

// closing returns the index of the ')' matching the '(' at toks[open] (the last index if the
// parentheses are unbalanced, which the check has already ruled out).
func closing(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		if toks[i].isPunct("(") {
			depth++
		} else if toks[i].isPunct(")") {
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(toks) - 1
}

// splitTop splits tokens at top-level commas.
func splitTop(toks []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range toks {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case t.isPunct(",") && depth == 0:
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	if start < len(toks) {
		out = append(out, toks[start:])
	} else if len(toks) > 0 {
		out = append(out, nil) // a trailing comma leaves an empty item
	}
	return out
}

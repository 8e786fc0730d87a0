package seed

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/store"
)

// Sample is the emulator's datasource.Executor, beside datasource.Live of the server: it
// answers SQL data sources from sample tables: the tables of the version's
// config (name, columns with their types, row_count), filled with deterministic generated
// rows (values.go) in an in-memory SQLite database per version, which the query then runs on
// as real SQL, read-only. So a query's result is what the SQL says: WHERE filters, ORDER BY
// sorts, joins join, aggregates aggregate. The SQL is SQLite's, which takes most portable
// SQL, $1 and ? placeholders, and "quoted" or `backquoted` names; config.schema, when set,
// is an alias of the sample tables (public.orders). HTTP data sources answer with generated
// items (sample_fields, or fields guessed from the path's resource).

var _ datasource.Executor = (*Sample)(nil)

// maxSampleDBs bounds how many versions keep their sample database in memory.
const maxSampleDBs = 32

// Sample is the emulator's executor of data source queries (see the comment above).
type Sample struct {
	store *store.Store

	mu     sync.Mutex
	dbs    map[string]*sampleDB // by version id
	order  []string             // version ids, oldest first
	closed bool
}

type sampleDB struct {
	*datasource.SQLDB
	keep  *sql.DB // the connection that created the in-memory database, which lives as long as it
	users datasource.Users
}

func (d *sampleDB) close() error { return errors.Join(d.SQLDB.Close(), d.keep.Close()) }

// NewSample returns the emulator's executor over the data sources of st.
func NewSample(st *store.Store) *Sample {
	return &Sample{store: st, dbs: map[string]*sampleDB{}}
}

// Query runs req on the data source's sample data (see Executor).
func (s *Sample) Query(ctx context.Context, ws, id string, req datasource.Request) (*datasource.Result, error) {
	ds, cfg, err := datasource.Load(ctx, s.store, ws, id)
	if err != nil {
		return nil, err
	}
	bound, err := datasource.Prepare(cfg, req)
	if err != nil {
		return nil, err
	}
	if cfg.Type == "http" {
		return sampleHTTP(cfg, req, bound)
	}
	db, err := s.acquire(ctx, *ds.ActiveVersionID, cfg)
	if err != nil {
		return nil, err
	}
	defer s.release(db)
	res, err := db.Run(ctx, cfg, req, bound)
	var qe *datasource.QueryError
	if errors.As(err, &qe) && strings.Contains(qe.Message, "no such table") {
		qe.Message += "; the emulator's sample tables are: " + tableNames(cfg)
	}
	return res, err
}

// Describe lists the sample tables as the sample database's catalog has them.
func (s *Sample) Describe(ctx context.Context, ws, id string) ([]datasource.Table, error) {
	ds, cfg, err := datasource.Load(ctx, s.store, ws, id)
	if err != nil {
		return nil, err
	}
	if cfg.Type == "http" {
		return []datasource.Table{}, nil
	}
	db, err := s.acquire(ctx, *ds.ActiveVersionID, cfg)
	if err != nil {
		return nil, err
	}
	defer s.release(db)
	return db.Describe(ctx, cfg)
}

// Close releases every sample database.
func (s *Sample) Close() error {
	s.mu.Lock()
	dbs := s.dbs
	s.dbs, s.order, s.closed = map[string]*sampleDB{}, nil, true
	s.mu.Unlock()
	var errs []error
	for _, d := range dbs {
		errs = append(errs, d.close())
	}
	return errors.Join(errs...)
}

// acquire returns the sample database of a version, building it on first use; building is
// done under the lock, so concurrent first queries build it once.
func (s *Sample) acquire(ctx context.Context, version string, cfg *datasource.Config) (*sampleDB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("data source executor is closed")
	}
	d := s.dbs[version]
	if d == nil {
		var err error
		if d, err = buildSample(ctx, cfg); err != nil {
			return nil, err
		}
		s.dbs[version] = d
		s.order = append(s.order, version)
		for len(s.order) > maxSampleDBs {
			old := s.dbs[s.order[0]]
			delete(s.dbs, s.order[0])
			s.order = s.order[1:]
			if old.users.Retire() {
				old.close()
			}
		}
	}
	d.users.Add()
	return d, nil
}

func (s *Sample) release(d *sampleDB) {
	if d.users.Done() {
		d.close()
	}
}

var sampleSeq atomic.Uint64

// buildSample creates the config's tables in a new in-memory database, fills them, and
// opens the read-only pool queries run on.
func buildSample(ctx context.Context, cfg *datasource.Config) (*sampleDB, error) {
	var salt [6]byte
	_, _ = rand.Read(salt[:])
	name := fmt.Sprintf("/agentplane-sample-%d-%s", sampleSeq.Add(1), hex.EncodeToString(salt[:]))
	keep, err := sql.Open("sqlite", "file:"+name+"?vfs=memdb")
	if err != nil {
		return nil, err
	}
	keep.SetMaxOpenConns(1)
	keep.SetMaxIdleConns(1)
	keep.SetConnMaxIdleTime(0)
	if err := fillSample(ctx, keep, cfg.Tables); err != nil {
		keep.Close()
		return nil, fmt.Errorf("build sample tables: %w", err)
	}
	ro := "file:" + name + "?vfs=memdb&mode=ro"
	base, err := sqlite.NewConnector(ro + "&_pragma=query_only(1)")
	if err != nil {
		keep.Close()
		return nil, err
	}
	db := sql.OpenDB(schemaAlias{Connector: base, uri: ro, schema: cfg.Schema})
	return &sampleDB{SQLDB: datasource.NewSQLDB(db, "sqlite"), keep: keep}, nil
}

// schemaAlias attaches the sample database a second time under config.schema on every
// connection, so that schema-qualified names (public.orders) work as they do on the server.
type schemaAlias struct {
	driver.Connector
	uri, schema string
}

func (c schemaAlias) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil || c.schema == "" || strings.EqualFold(c.schema, "main") || strings.EqualFold(c.schema, "temp") {
		return conn, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		return conn, nil
	}
	if _, err := ex.ExecContext(ctx, "ATTACH ? AS "+datasource.QuoteIdent(c.schema), []driver.NamedValue{{Ordinal: 1, Value: c.uri}}); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// fillSample creates each table, its columns declared with the config's types (so results
// show them), and inserts its generated rows.
func fillSample(ctx context.Context, db *sql.DB, tables []datasource.Table) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	for _, t := range tables {
		cols := make([]string, len(t.Columns))
		marks := make([]string, len(t.Columns))
		gens := make([]func(int) any, len(t.Columns))
		for i, c := range t.Columns {
			cols[i] = datasource.QuoteIdent(c.Name) + " " + datasource.QuoteIdent(c.Type)
			marks[i] = "?"
			gens[i] = generator(t.Name, c)
		}
		if _, err := tx.ExecContext(ctx, "CREATE TABLE "+datasource.QuoteIdent(t.Name)+" ("+strings.Join(cols, ", ")+")"); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
		stmt, err := tx.PrepareContext(ctx, "INSERT INTO "+datasource.QuoteIdent(t.Name)+" VALUES ("+strings.Join(marks, ", ")+")")
		if err != nil {
			return err
		}
		args := make([]any, len(gens))
		for row := range t.RowCount {
			for i, g := range gens {
				args[i] = sqliteValue(g(row))
			}
			if _, err := stmt.ExecContext(ctx, args...); err != nil {
				stmt.Close()
				return fmt.Errorf("table %s: %w", t.Name, err)
			}
		}
		stmt.Close()
	}
	return tx.Commit()
}

// sqliteValue stores a generated value: booleans as 0/1, objects and arrays as JSON text.
func sqliteValue(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return v
}

// sampleHTTP answers a path of an http source with items shaped by config.sample_fields (or
// by the resource's name). A trailing numeric segment selects one item by id; query
// parameters (and params) named like a field fix that field's value, and limit/offset page
// the items.
func sampleHTTP(cfg *datasource.Config, req datasource.Request, bound int) (*datasource.Result, error) {
	u, err := datasource.CheckPath(req.Query)
	if err != nil {
		return nil, err
	}
	segs := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	resource, itemID := "", -1
	for j := len(segs) - 1; j >= 0; j-- {
		if n, err := strconv.Atoi(segs[j]); err == nil && j == len(segs)-1 && n > 0 {
			itemID = n
			continue
		}
		resource = segs[j]
		break
	}
	if resource == "" && cfg.BaseURL != "" {
		base := strings.FieldsFunc(cfg.BaseURL, func(r rune) bool { return r == '/' })
		resource = base[len(base)-1]
	}
	fields := cfg.SampleFields
	if len(fields) == 0 {
		fields = defaultFields(resource)
	}
	if resource == "" {
		resource = "items"
	}
	filters := map[string]string{}
	for k, vs := range u.Query() {
		filters[strings.ToLower(k)] = vs[len(vs)-1]
	}
	if named, ok := req.Params.(map[string]any); ok {
		for k, v := range named {
			filters[strings.ToLower(k)] = datasource.ParamText(v)
		}
	}
	n, shift := cfg.SampleRows, 0
	if itemID > 0 { // one item: the row whose id is itemID, so its other fields match it
		n, shift = min(n, 1), itemID-1
	}
	first, count := 0, n
	if v, err := strconv.Atoi(filters["offset"]); err == nil && v > 0 {
		first = min(v, n)
	}
	if v, err := strconv.Atoi(filters["limit"]); err == nil && v >= 0 {
		count = v
	}
	last := min(n, first+count)
	res := &datasource.Result{Columns: make([]datasource.Column, len(fields)), Rows: [][]any{}}
	values := make([]func(int) any, len(fields))
	for i, f := range fields {
		res.Columns[i] = datasource.Column{Name: f.Name, Type: f.Type}
		gen := generator(resource, f)
		values[i] = func(i int) any { return gen(i + shift) }
		if v, ok := filters[strings.ToLower(f.Name)]; ok {
			fixed := typedValue(v, f.Type)
			values[i] = func(int) any { return fixed }
		}
	}
	for i := first; i < last; i++ {
		if len(res.Rows) == bound {
			res.Truncated = true
			break
		}
		row := make([]any, len(values))
		for j, v := range values {
			row[j] = v(i)
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// tableNames lists the configured tables for messages.
func tableNames(c *datasource.Config) string {
	if len(c.Tables) == 0 {
		return "none (add config.tables with each table's columns)"
	}
	names := make([]string, len(c.Tables))
	for i, t := range c.Tables {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

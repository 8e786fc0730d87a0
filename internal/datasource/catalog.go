package datasource

import (
	"context"
	"database/sql"
	"strings"
)

// catalogQueries list (table, column, type, nullable) of the tables and views a query sees,
// in table then column order, at most 5000 columns: PostgreSQL's search_path (config.schema, else the current
// schema), MySQL's current database, SQLite's main database.
var catalogQueries = map[string]string{
	"postgres": `SELECT table_name::text, column_name::text, data_type::text, is_nullable = 'YES'
		FROM information_schema.columns WHERE table_schema = current_schema()
		ORDER BY table_name, ordinal_position LIMIT 5000`,
	"mysql": `SELECT table_name, column_name, column_type, is_nullable = 'YES'
		FROM information_schema.columns WHERE table_schema = DATABASE()
		ORDER BY table_name, ordinal_position LIMIT 5000`,
	"sqlite": `SELECT m.name, p.name, p.type, p."notnull" = 0
		FROM sqlite_master m JOIN pragma_table_info(m.name) p
		WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\_%' ESCAPE '\'
		ORDER BY m.name, p.cid LIMIT 5000`,
}

// Describe reads the catalog once per pool (a new version or credential opens a new pool,
// which reads it again); an error is not cached. The cache exists for the engine: every run
// of an agent with config.data_sources describes its data sources' tables to the model, and
// reading the catalog each time would add a database round trip (a catalog query over every
// column) to every run.
func (p *SQLDB) Describe(ctx context.Context, cfg *Config) ([]Table, error) {
	p.mu.Lock()
	cached := p.tables
	p.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	var tables []Table
	err := p.inReadOnlyTx(ctx, cfg, func(ctx context.Context, tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, catalogQueries[p.dialect])
		if err != nil {
			return err
		}
		defer rows.Close()
		tables = []Table{}
		for rows.Next() {
			var table, col, typ string
			var nullable bool
			if err := rows.Scan(&table, &col, &typ, &nullable); err != nil {
				return err
			}
			if n := len(tables); n == 0 || tables[n-1].Name != table {
				tables = append(tables, Table{Name: table})
			}
			t := &tables[len(tables)-1]
			t.Columns = append(t.Columns, Field{Name: col, Type: strings.ToLower(typ), Nullable: nullable})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.tables = tables
	p.mu.Unlock()
	return tables, nil
}

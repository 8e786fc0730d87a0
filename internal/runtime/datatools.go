package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/datasource"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/llm"
	"github.com/agentplane/agentplane/internal/store"
)

// A version's config.data_sources gives an agent-type agent one query_<name> tool per data
// source. Its description lists the tables and columns of the source's catalog
// (Executor.Describe, which caches them per data source version and credential); a call runs
// through the same Executor as POST /data-sources/{id}/query, read-only and within the
// source's bounds, and its result (or the database's refusal) goes back to the model.

// maxCatalogText bounds the table list in a query tool's description, so a database with
// thousands of columns does not fill the model's context.
const maxCatalogText = 8 << 10

// errNoExecutor is why a server without a data source executor cannot query data sources.
var errNoExecutor = errors.New("this server has no data source executor; data sources cannot be queried here")

// dataTool is one data source as a tool.
type dataTool struct {
	r  *run
	ds *domain.DataSource
}

// dataTools loads the version's data sources and describes each as a tool. A data source
// deleted since the version was saved fails the run (its tool was promised); a catalog that
// cannot be read leaves the tool without a table list, as a span says.
func (r *run) dataTools(ctx context.Context, timeout time.Duration) ([]llm.ToolSpec, []*dataTool, error) {
	var specs []llm.ToolSpec
	var tools []*dataTool
	for _, id := range r.cfg.DataSources {
		ds, err := r.e.st.DataSourceGet(ctx, r.x.WorkspaceID, id)
		if store.IsNotFound(err) {
			return nil, nil, fmt.Errorf("data source %s of config.data_sources no longer exists; create a version without it", id)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("load data source %s: %w", id, err)
		}
		var tables []datasource.Table
		catalogErr := errNoExecutor
		if r.e.sources != nil {
			dctx, cancel := context.WithTimeout(ctx, timeout)
			tables, catalogErr = r.e.sources.Describe(dctx, r.x.WorkspaceID, id)
			cancel()
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			if catalogErr != nil {
				sp := r.span("tool", "describe data source: "+ds.Name, nil)
				sp.Attributes["data_source_id"] = ds.ID
				r.end(sp, nil, fmt.Errorf("the tables of data source %s could not be read; its tool is described without them: %w", ds.ID, catalogErr))
			}
		}
		specs = append(specs, llm.ToolSpec{Name: "query_" + dataToolName(ds.Name), Description: describeSource(ds, tables, catalogErr), InputSchema: querySchema(ds.Type)})
		tools = append(tools, &dataTool{r: r, ds: ds})
	}
	return specs, tools, nil
}

// dataToolName makes a data source's name fit a tool name: lower case letters, digits and
// single underscores, at most 50 characters ("source" when nothing is left).
func dataToolName(name string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.TrimRight(b.String(), "_")
	if len(s) > 50 {
		s = strings.TrimRight(s[:50], "_")
	}
	if s == "" {
		return "source"
	}
	return s
}

// dialectNotes says how a data source type takes its query and parameters.
var dialectNotes = map[string]string{
	"postgres": "one read-only SQL statement (PostgreSQL); placeholders $1, $2, … take params in order",
	"mysql":    "one read-only SQL statement (MySQL); placeholders ? take params in order",
	"sqlite":   "one read-only SQL statement (SQLite); placeholders ? take params in order",
	"http":     "a path relative to the API's base URL, such as /items?limit=10; params become query parameters (GET) or the JSON body (POST)",
}

// describeSource is a query tool's description: what it queries, how, and its tables.
func describeSource(ds *domain.DataSource, tables []datasource.Table, catalogErr error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Queries the data source %q", ds.Name)
	if d := strings.TrimSpace(ds.Description); d != "" {
		fmt.Fprintf(&b, " (%s)", summarize(d, 300))
	}
	fmt.Fprintf(&b, ". query is %s. Writes are refused; results are cut to the source's row limit (truncated: true).", dialectNotes[ds.Type])
	switch {
	case ds.Type == "http":
	case catalogErr != nil:
		b.WriteString(" Its tables could not be listed; query the catalog (information_schema or sqlite_master) to find them.")
	case len(tables) == 0:
		b.WriteString(" It has no tables.")
	default:
		b.WriteString(" Tables (column type):")
		n := b.Len()
		for i, t := range tables {
			var line strings.Builder
			line.WriteString("\n- " + t.Name + "(")
			for j, c := range t.Columns {
				if j > 0 {
					line.WriteString(", ")
				}
				line.WriteString(c.Name + " " + c.Type)
			}
			line.WriteString(")")
			if b.Len()-n+line.Len() > maxCatalogText {
				fmt.Fprintf(&b, "\n- … and %d more tables", len(tables)-i)
				break
			}
			b.WriteString(line.String())
		}
	}
	return b.String()
}

// querySchema is the input schema of a query tool: a query and its parameters, positional
// for SQL, an object for HTTP APIs.
func querySchema(typ string) json.RawMessage {
	params := `{"type":"array","items":{"type":["string","number","boolean","null"]},"description":"Values bound to the placeholders, in order; never put values into the query text."}`
	query := "One read-only SQL statement."
	if typ == "http" {
		params = `{"type":"object","description":"Query parameters (GET) or the JSON body (POST)."}`
		query = "A path relative to the API's base URL, such as /items?limit=10."
	}
	q, _ := json.Marshal(query)
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":` + string(q) + `},"params":` + params + `},"required":["query"]}`)
}

// queryResult is what the model reads for a query that ran.
type queryResult struct {
	Columns   []queryColumn `json:"columns"`
	Rows      [][]any       `json:"rows"`
	RowCount  int           `json:"row_count"`
	Truncated bool          `json:"truncated"`
}

type queryColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// call runs the model's query. What the data source refuses (a write, a timeout, a bad
// statement) and what cannot run (the source unreachable) go back to the model as an error
// result; only the run's own end is an error.
func (t *dataTool) call(ctx context.Context, c llm.ToolCall, sp *domain.Span) (string, toolOutcome, error) {
	sp.Attributes["data_source_id"], sp.Attributes["data_source"] = t.ds.ID, t.ds.Name
	if t.r.e.sources == nil {
		return errNoExecutor.Error(), toolFailed, nil
	}
	var args struct {
		Query  string `json:"query"`
		Params any    `json:"params"`
	}
	dec := json.NewDecoder(bytes.NewReader(c.Arguments))
	dec.UseNumber() // bound as the numbers they are, not as float64
	if err := dec.Decode(&args); err != nil {
		return "the arguments must be an object with query (a string) and optional params", toolError, nil
	}
	res, err := t.r.e.sources.Query(ctx, t.r.x.WorkspaceID, t.ds.ID, datasource.Request{Query: args.Query, Params: args.Params})
	if err != nil {
		var qe *datasource.QueryError
		var fe *domain.FieldError
		var se *datasource.SourceError
		switch {
		case ctx.Err() != nil:
			return "", "", ctx.Err() // the call's timeout or the run's end: the toolset words it
		case errors.As(err, &qe) && qe.Timeout:
			return qe.Message, toolTimeout, nil
		case errors.As(err, &qe):
			return qe.Message, toolError, nil
		case errors.As(err, &fe):
			return fe.Error(), toolError, nil
		case errors.As(err, &se):
			return se.Message, toolFailed, nil
		case store.IsNotFound(err):
			return fmt.Sprintf("data source %s no longer exists", t.ds.ID), toolFailed, nil
		}
		t.r.e.log.Error("query a data source for a tool call", "execution_id", t.r.x.ID, "data_source_id", t.ds.ID, "error", err)
		return "the query failed on the server", toolFailed, nil
	}
	out := queryResult{Columns: make([]queryColumn, len(res.Columns)), Rows: res.Rows, RowCount: len(res.Rows), Truncated: res.Truncated}
	for i, col := range res.Columns {
		out.Columns[i] = queryColumn(col)
	}
	if out.Rows == nil {
		out.Rows = [][]any{}
	}
	sp.Attributes["row_count"], sp.Attributes["truncated"] = out.RowCount, out.Truncated
	raw, err := json.Marshal(out)
	if err != nil {
		return "the result could not be encoded: " + err.Error(), toolFailed, nil
	}
	return string(raw), toolOK, nil
}

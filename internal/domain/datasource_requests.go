package domain

import "encoding/json"

// DataSourceCreateRequest is a new data source as a client asks for it. The document checks
// its shape; Validate holds the rest, and datasource.ParseConfig its config.
type DataSourceCreateRequest struct {
	Name         string         `json:"name" minLength:"1" pattern:"\\S" maxLength:"200" doc:"Display name."`
	Type         string         `json:"type" enum:"postgres,mysql,sqlite,http"`
	Description  string         `json:"description,omitempty" maxLength:"2000"`
	CredentialID *string        `json:"credential_id,omitempty" doc:"Id of a credential of the workspace used to connect: a database_url credential (postgres:// URL, MySQL DSN or mysql:// URL, SQLite file path) for SQL sources; a bearer_token, oauth2, api_key or basic_auth credential for http sources."`
	Config       map[string]any `json:"config,omitempty" doc:"Configuration of version 1, which becomes active. SQL sources: host, port, database, ssl_mode (override the credential's URL), schema, path (sqlite), max_rows (default 1000), max_bytes (default 1048576), max_execution_ms (statement timeout, default 10000), timeout_ms, read_only (always true), and tables [{name, columns: [{name, type, nullable}], row_count}] for the emulator's sample tables. http sources: base_url, method (GET or POST), headers, query, timeout_ms (default 10000), max_rows, max_bytes, and sample_fields and sample_rows for the emulator."`
	Notes        string         `json:"notes,omitempty" maxLength:"2000" doc:"Notes of version 1."`
}

// Validate holds a new data source's rule: a name that is more than white space.
func (r *DataSourceCreateRequest) Validate() error {
	return NotBlank("name", r.Name)
}

// DataSourceUpdateRequest is a change to a data source; a field left out stays as it is.
// CredentialID is read raw: absent, null, "" (detach) or an id.
type DataSourceUpdateRequest struct {
	Name         *string         `json:"name,omitempty" minLength:"1" pattern:"\\S" maxLength:"200"`
	Description  *string         `json:"description,omitempty" maxLength:"2000"`
	CredentialID json.RawMessage `json:"credential_id,omitempty" doc:"A credential id of the workspace, or null (or \"\") to detach the credential."`
}

// Validate holds the rule of a data source change: a new name that is more than white space.
func (r *DataSourceUpdateRequest) Validate() error {
	return NotBlankIfSet("name", r.Name)
}

// DataSourceVersionCreateRequest is a new version of a data source.
type DataSourceVersionCreateRequest struct {
	Config map[string]any `json:"config" required:"true" doc:"The version's configuration (see createDataSource)."`
	Notes  string         `json:"notes,omitempty" maxLength:"2000"`
}

// Validate holds the rule a version's config has before its source's type is known: it is
// given. datasource.ParseConfig holds the rules of its fields.
func (r *DataSourceVersionCreateRequest) Validate() error {
	if r.Config == nil {
		return Invalid("config", "is required: give the version's configuration object")
	}
	return nil
}

package domain

import "database/sql"

// DataSourceTypes lists the kinds of data source.
var DataSourceTypes = []string{"postgres", "mysql", "sqlite", "http"}

// NullString is a nullable string for patches: a nil *NullString leaves a column as it is, and
// one with Valid false sets the column to NULL.
type NullString = sql.NullString

// DataSource is a named, versioned connection to a database or HTTP API that agents query;
// Config is that of its active version ({} when it has none).
type DataSource struct {
	ID              string     `json:"id"`
	WorkspaceID     string     `json:"workspace_id"`
	Name            string     `json:"name"`
	Type            string     `json:"type" enum:"postgres,mysql,sqlite,http"`
	Description     string     `json:"description"`
	CredentialID    *string    `json:"credential_id"`
	ActiveVersionID *string    `json:"active_version_id" nullable:"false" doc:"A data source always has an active version (version 1 from creation on)."`
	ActiveVersion   *int       `json:"active_version" nullable:"false"`
	VersionCount    int        `json:"version_count"`
	Config          JSONObject `json:"config"`
	CreatedAt       Time       `json:"created_at"`
	UpdatedAt       Time       `json:"updated_at"`
}

// DataSourceVersion is one immutable configuration of a data source.
type DataSourceVersion struct {
	ID           string     `json:"id"`
	WorkspaceID  string     `json:"workspace_id"`
	DataSourceID string     `json:"data_source_id"`
	Version      int        `json:"version"`
	Config       JSONObject `json:"config"`
	Notes        string     `json:"notes"`
	IsActive     bool       `json:"is_active"`
	CreatedAt    Time       `json:"created_at"`
}

// DataSourceFilter narrows DataSourceList; empty fields match everything.
type DataSourceFilter struct {
	Type  string
	Query string // substring of name or description, case-insensitive
}

// DataSourcePatch holds the fields of a data source to change; nil fields stay as they are.
// CredentialID with Valid false detaches the credential.
type DataSourcePatch struct {
	Name         *string
	Description  *string
	CredentialID *NullString
}

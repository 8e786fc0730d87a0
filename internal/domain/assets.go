package domain

// The types of an asset.
const (
	AssetImage = "image"
	AssetAudio = "audio"
	AssetFile  = "file"
)

// The sources of an asset: what produced it.
const (
	AssetSourceModel  = "model"  // a part of a model's reply
	AssetSourceMCP    = "mcp"    // an image or audio item of an MCP tool result
	AssetSourceTool   = "tool"   // a file (embedded resource) a tool returned
	AssetSourceUpload = "upload" // sent through POST /assets
)

// Asset is one piece of media of a workspace (an image, audio or a file), usually produced
// by a run. Its bytes are a blob of the workspace, shared with other assets of the same
// bytes.
type Asset struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ExecutionID *string    `json:"execution_id" doc:"The execution that produced the asset; null for an upload without one."`
	Type        string     `json:"type" enum:"image,audio,file"`
	MimeType    string     `json:"mime_type" doc:"The media type the content is served with, e.g. image/png."`
	Size        int64      `json:"size" doc:"Size of the content in bytes."`
	SHA256      string     `json:"sha256" doc:"Lower-case hex SHA-256 of the content; also its ETag."`
	Name        string     `json:"name" doc:"A file name, when the source gave one."`
	Source      string     `json:"source" enum:"model,mcp,tool,upload" doc:"What produced it: a model reply, an MCP tool's image or audio, a file a tool returned, or an upload."`
	Metadata    JSONObject `json:"metadata" doc:"Where it came from, e.g. the model, or the MCP server and tool."`
	CreatedAt   Time       `json:"created_at"`
}

// AssetFilter narrows AssetList; empty fields match everything.
type AssetFilter struct {
	ExecutionID string
	Type        string
}

// AssetStorage is what a workspace's assets take up.
type AssetStorage struct {
	Bytes      int64 `json:"bytes" doc:"Bytes stored: each distinct content counted once (what the quota limits)."`
	Count      int   `json:"count" doc:"Number of assets."`
	Blobs      int   `json:"blobs" doc:"Number of distinct contents stored."`
	AssetBytes int64 `json:"asset_bytes" doc:"Sum of the sizes of all assets, shared contents counted once per asset."`
	QuotaBytes int64 `json:"quota_bytes" doc:"The workspace's asset quota in bytes; 0 is unlimited."`
}

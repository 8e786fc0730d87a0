package api

import (
	"embed"
	"strings"
)

// descriptionFiles holds the long descriptions of the operations, one Markdown file each,
// named after the operationId (createAgent.md), so that the route literals stay short and a
// description reads and diffs as text. Files whose names start with "_" are fragments that
// several operations share (the template language, the MCP server).
//
//go:embed descriptions/*.md
var descriptionFiles embed.FS

// description is the text of descriptions/<name>.md without its final newline; "" when there
// is no such file (TestOpenAPIDescriptions fails on an operation without one).
func description(name string) string {
	b, err := descriptionFiles.ReadFile("descriptions/" + name + ".md")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// description is the operation's description: desc when the route literal computes one (from
// a limit in the code, or shared fragments), else descriptions/<op>.md.
func (rt route) description() string {
	if rt.desc != "" {
		return rt.desc
	}
	return description(rt.op)
}

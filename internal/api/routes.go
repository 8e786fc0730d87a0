package api

import "github.com/agentplane/agentplane/internal/auth"

// Every scope a route requires is one a key may hold: the route table declares them.
func init() {
	for _, rt := range (&Server{}).routeTable() {
		if rt.scope != "" && rt.scope != auth.ScopeAll {
			auth.RegisterScopes(rt.scope)
		}
	}
}

// routeTable is every route of the API, resource by resource. The mux, the OpenAPI document
// and the scope checks are all derived from it.
func (s *Server) routeTable() []route {
	var rs []route
	for _, group := range [][]route{
		s.systemRoutes(),
		s.agentRoutes(),
		s.promptRoutes(),
		s.dataSourceRoutes(),
		s.credentialRoutes(),
		s.llmModelRoutes(),
		s.mcpToolRoutes(),
		s.guardrailRoutes(),
		s.memoryRoutes(),
		s.executionRoutes(),
		s.chatRoutes(),
		s.traceRoutes(),
		s.scoreRoutes(),
		s.annotationRoutes(),
		s.datasetRoutes(),
		s.evaluatorRoutes(),
		s.evaluationRuleRoutes(),
		s.experimentRoutes(),
		s.assetRoutes(),
		s.apiKeyRoutes(),
		s.workspaceRoutes(),
		// Agent triggers and their hook endpoint.
		s.triggerRoutes(),
		s.hookRoutes(),
		s.webhookRoutes(),
		// Agents through other protocols.
		s.openAIRoutes(),
		s.mcpRoutes(),
	} {
		rs = append(rs, group...)
	}
	return rs
}

const v1 = "/api/v1"

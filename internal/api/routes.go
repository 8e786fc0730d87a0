package api

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

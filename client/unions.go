package client

// The document's oneOf fields are generated as union types (AgentConfig_Tools_Item,
// Simulation_Fail) written with From… methods; these build the common values in one call.
// A From… method fails only when its value cannot be encoded as JSON, which a string, a
// bool, a map of ints or a struct of strings always can.

// MCPTools returns references to all the tools of the MCP tool servers ids, for
// AgentConfig.Tools.
func MCPTools(ids ...string) []AgentConfig_Tools_Item {
	refs := make([]AgentConfig_Tools_Item, len(ids))
	for i, id := range ids {
		_ = refs[i].FromAgentConfigTools0(id)
	}
	return refs
}

// MCPToolNames returns a reference to the tools names of one MCP tool server.
func MCPToolNames(id string, names ...string) AgentConfig_Tools_Item {
	var ref AgentConfig_Tools_Item
	_ = ref.FromMCPToolSelection(MCPToolSelection{McpToolID: id, Names: names})
	return ref
}

// FailAlways is a Simulation.Fail that makes every simulated model call fail.
func FailAlways() Simulation_Fail {
	var f Simulation_Fail
	_ = f.FromSimulationFail0(true)
	return f
}

// FailModels is a Simulation.Fail that makes the calls of the models named fail with the HTTP
// status given (503, say), as a provider that is down would.
func FailModels(statuses map[string]int) Simulation_Fail {
	m := make(SimulationFailModels, len(statuses))
	for model, status := range statuses {
		m[model] = status
	}
	var f Simulation_Fail
	_ = f.FromSimulationFailModels(m)
	return f
}

// Ptr returns a pointer to v, for the optional fields whose zero is a value (AskUser,
// Temperature, MaxRetries, Enabled …).
func Ptr[T any](v T) *T { return &v }

// Val returns what p points to, or T's zero value when p is nil: for the optional fields of
// generated types (a token count the server leaves out reads as 0).
func Val[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

package domain

// PurgeCounts are the rows one purge deleted, by kind.
type PurgeCounts struct {
	Executions, Events, Traces, Spans, Scores, Approvals, Deliveries int
}

// Add adds o to c.
func (c *PurgeCounts) Add(o PurgeCounts) {
	c.Executions += o.Executions
	c.Events += o.Events
	c.Traces += o.Traces
	c.Spans += o.Spans
	c.Scores += o.Scores
	c.Approvals += o.Approvals
	c.Deliveries += o.Deliveries
}

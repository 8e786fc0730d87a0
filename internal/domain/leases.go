package domain

import (
	"strings"
	"time"
)

// Claim makes a node the owner of a pass over a running execution: the row records the node
// and a lease that ends Lease from now on the database's clock, counts a new attempt, clears
// the model-called mark and reserves SeqBlock more frame ids for the pass.
type Claim struct {
	Node     string
	Lease    time.Duration
	SeqBlock int
	// ModelCalled, on ExecutionCreate, writes the row with the model-called mark already set
	// (see ExecutionMarkModelCalled), sparing the pass that statement: for a sync run, whose
	// caller waits on this node, a stop of the node (a crash or a drain) then fails the run
	// instead of queueing it again to run where nobody waits for it.
	ModelCalled bool
}

// Owner names one pass over an execution: the node that runs it and the attempt it took.
// Writes of a pass are guarded by it, so a pass that lost its lease writes nothing.
type Owner struct {
	Node    string
	Attempt int
}

// LeaseRenewal is one execution whose lease a heartbeat renewed.
type LeaseRenewal struct {
	ID      string
	Attempt int
}

// ChannelFor is the notification channel of a schema: "agentplane" for public, else
// "agentplane_" and the schema's name (lower-cased identifier characters, at most 63 bytes).
func ChannelFor(schema string) string {
	if schema == "" || schema == "public" {
		return "agentplane"
	}
	var b strings.Builder
	b.WriteString("agentplane_")
	for _, r := range strings.ToLower(schema) {
		if b.Len() >= 63 {
			break
		}
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

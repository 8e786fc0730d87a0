package domain

import "time"

// HealthState is what every node knows of a model credential or a provider's model (see
// internal/modelhealth): its consecutive failures, and until when it is held off (zero
// when it is not).
type HealthState struct {
	Failures int
	Until    time.Time
}

// HealthFailure says how a failure counts: once Failures reaches Threshold the key is held
// off for RetryAfter when set, else for a wait that starts at Base and doubles with each
// further failure up to Max.
type HealthFailure struct {
	Threshold  int
	Base, Max  time.Duration
	RetryAfter time.Duration
}

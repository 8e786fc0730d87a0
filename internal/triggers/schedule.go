// Package triggers starts agent runs from outside: it parses schedules, maps inbound events
// to run input, and runs the scheduler that fires each schedule's ticks exactly once across
// every node sharing a database. The chat platforms' wire formats live in its platform
// subpackage; the hook endpoint is the API's.
package triggers

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/triggers/platform"
)

// TypeSchedule is the trigger type that runs its agent on a cron schedule; it has no hook URL.
const TypeSchedule = domain.TriggerTypeSchedule

func init() {
	platform.Register(platform.Spec{
		Type: TypeSchedule,
		Doc:  "schedule: cron (five fields), timezone (IANA, default UTC), catch_up (default false).",
		Fields: []platform.Field{
			{Name: "cron", Kind: platform.KindText, Required: true},
			{Name: "timezone", Kind: platform.KindText, Default: "UTC"},
			{Name: "catch_up", Kind: platform.KindBool, Default: false},
		},
		Validate: validateSchedule,
	})
}

// validateSchedule parses the cron expression in its time zone; a *domain.FieldError names the field.
func validateSchedule(cfg platform.Config) error {
	expr, _ := cfg["cron"].(string)
	tz, _ := cfg["timezone"].(string)
	_, err := ParseSchedule(expr, tz)
	return err
}

// cronParser reads the five standard fields (minute, hour, day of month, month, day of
// week) and nothing else: no seconds, no @descriptors, no CRON_TZ prefix (the time zone is
// a field of its own).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// Schedule is a parsed cron expression in a time zone.
type Schedule struct {
	sched cron.Schedule
	loc   *time.Location
}

// ParseSchedule parses a five-field cron expression and an IANA time zone name ("" is UTC).
// Its errors name the field at fault ("cron" or "timezone").
func ParseSchedule(expr, timezone string) (*Schedule, error) {
	loc := time.UTC
	if timezone != "" {
		l, err := time.LoadLocation(timezone)
		if err != nil || timezone == "Local" {
			return nil, domain.Invalid("timezone", "%q is not an IANA time zone such as Europe/Berlin", timezone)
		}
		loc = l
	}
	if f := strings.Fields(expr); len(f) > 0 && strings.Contains(f[0], "TZ=") {
		return nil, domain.Invalid("cron", "must not name a time zone (TZ=, CRON_TZ=): set timezone instead")
	}
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, domain.Invalid("cron", "must be five fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * 1-5\": %v", err)
	}
	return &Schedule{sched: s, loc: loc}, nil
}

// Next returns the first tick strictly after t, in UTC; the zero time when there is none
// (an expression that can never match, such as 30 February).
func (s *Schedule) Next(t time.Time) time.Time {
	n := s.sched.Next(t.In(s.loc))
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

-- +goose Up
-- Per-tool approvals and questions to the user: an approval has a kind (checkpoint, tools,
-- question); a tools or question approval holds the pending tool calls (with the reviewer's
-- decision per call once decided) as JSON, a question its text and choices, then the
-- answer; who decided; and, with config.approval.timeout_seconds, when it expires and what
-- the timer decides then (on_timeout). The partial index serves the leader's expiry sweep.
ALTER TABLE approvals ADD COLUMN kind TEXT NOT NULL DEFAULT 'checkpoint';
ALTER TABLE approvals ADD COLUMN calls TEXT NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN question TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN choices TEXT NOT NULL DEFAULT '[]';
ALTER TABLE approvals ADD COLUMN answer TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN decided_by TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN expires_at INTEGER;
ALTER TABLE approvals ADD COLUMN on_timeout TEXT NOT NULL DEFAULT '';
CREATE INDEX approvals_expiry ON approvals (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;

-- +goose Down
DROP INDEX approvals_expiry;
ALTER TABLE approvals DROP COLUMN on_timeout;
ALTER TABLE approvals DROP COLUMN expires_at;
ALTER TABLE approvals DROP COLUMN decided_by;
ALTER TABLE approvals DROP COLUMN answer;
ALTER TABLE approvals DROP COLUMN choices;
ALTER TABLE approvals DROP COLUMN question;
ALTER TABLE approvals DROP COLUMN calls;
ALTER TABLE approvals DROP COLUMN kind;

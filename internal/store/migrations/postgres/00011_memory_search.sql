-- +goose Up
-- Memories can belong to a chat session or an end user, and are searched by full text
-- (tsvector, English stemming) when a run puts the relevant ones into its prompt.
ALTER TABLE memories ADD COLUMN session_id TEXT;
ALTER TABLE memories ADD COLUMN end_user_id TEXT;
CREATE INDEX memories_session ON memories (workspace_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_end_user ON memories (workspace_id, end_user_id) WHERE end_user_id IS NOT NULL;
ALTER TABLE memories ADD COLUMN search tsvector
    GENERATED ALWAYS AS (to_tsvector('english', key || ' ' || content)) STORED;
CREATE INDEX memories_search ON memories USING GIN (search);

-- +goose Down
DROP INDEX memories_search;
ALTER TABLE memories DROP COLUMN search;
DROP INDEX memories_end_user;
DROP INDEX memories_session;
ALTER TABLE memories DROP COLUMN end_user_id;
ALTER TABLE memories DROP COLUMN session_id;

-- Sessions and what happened in them. Times are Unix milliseconds.
-- Off-the-record sessions never reach this database.

CREATE TABLE sessions (
    id            TEXT    PRIMARY KEY,
    mode          INTEGER NOT NULL,
    title         TEXT    NOT NULL DEFAULT '',
    created_ms    INTEGER NOT NULL,
    updated_ms    INTEGER NOT NULL,
    -- Kept with every message insert so listing needs no COUNT per session.
    message_count INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_by_update ON sessions (updated_ms DESC, id);

-- The conversation: one row per user message and per assistant answer.
-- message_id is the engine's id of the turn both belong to.
CREATE TABLE messages (
    session_id TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    content    TEXT    NOT NULL,
    message_id TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;

CREATE INDEX messages_by_turn ON messages (session_id, message_id);

-- Tool calls the agent proposed, whether they ran or not.
CREATE TABLE tool_calls (
    session_id       TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id       TEXT    NOT NULL,
    call_id          TEXT    NOT NULL,
    tool             TEXT    NOT NULL,
    arguments        TEXT    NOT NULL,
    proposed_ms      INTEGER NOT NULL,
    started_ms       INTEGER,          -- NULL: never ran
    completed_ms     INTEGER,          -- NULL: no result yet
    success          INTEGER,          -- NULL until completed
    output           TEXT,
    output_truncated INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, message_id, call_id)
) STRICT;

-- The shield's verdict on a tool call.
CREATE TABLE verdicts (
    session_id     TEXT    NOT NULL,
    message_id     TEXT    NOT NULL,
    call_id        TEXT    NOT NULL,
    decision       TEXT    NOT NULL,
    tier           INTEGER NOT NULL,
    confidence     REAL    NOT NULL,
    rule_ids       TEXT    NOT NULL,   -- JSON array of strings
    reasoning      TEXT    NOT NULL,
    action_type    TEXT    NOT NULL,
    action_hash    TEXT    NOT NULL,
    policy_version TEXT    NOT NULL,
    from_cache     INTEGER NOT NULL,
    created_ms     INTEGER NOT NULL,
    PRIMARY KEY (session_id, message_id, call_id),
    FOREIGN KEY (session_id, message_id, call_id) REFERENCES tool_calls (session_id, message_id, call_id) ON DELETE CASCADE
) STRICT;

-- Escalations put to a human and what became of them.
CREATE TABLE approvals (
    id           TEXT    PRIMARY KEY,
    session_id   TEXT    NOT NULL,
    message_id   TEXT    NOT NULL,
    call_id      TEXT    NOT NULL,
    requested_ms INTEGER NOT NULL,
    deadline_ms  INTEGER NOT NULL,
    outcome      TEXT,                 -- NULL while pending
    decided_by   TEXT,
    resolved_ms  INTEGER,
    FOREIGN KEY (session_id, message_id, call_id) REFERENCES tool_calls (session_id, message_id, call_id) ON DELETE CASCADE
) STRICT;

CREATE INDEX approvals_by_call ON approvals (session_id, message_id, call_id);

-- LLM tokens spent on one turn.
CREATE TABLE usage (
    session_id         TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    message_id         TEXT    NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    provider           TEXT    NOT NULL,
    model              TEXT    NOT NULL,
    created_ms         INTEGER NOT NULL,
    PRIMARY KEY (session_id, message_id)
) STRICT;

-- Workspace memory (the crawbl Memory service and the agent's memory
-- tools): short notes keyed by (workspace, category, key). Times are Unix
-- milliseconds; an upsert keeps created_ms.

CREATE TABLE memories (
    workspace_id TEXT    NOT NULL,
    category     TEXT    NOT NULL DEFAULT '',
    key          TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, category, key)
) STRICT;

CREATE INDEX memories_newest ON memories (workspace_id, updated_ms DESC, category, key);
CREATE INDEX memories_by_key ON memories (workspace_id, key);

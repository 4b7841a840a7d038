-- Schema of the generated-tables test; a ; in a comment must not split.
/* A block comment with a 'quote' and ; inside. */
CREATE TABLE IF NOT EXISTS kv (
  id    INTEGER PRIMARY KEY,
  name  TEXT NOT NULL DEFAULT 'a;b',  -- a default holding a semicolon
  score INTEGER,
  tag   TEXT,
  code  TEXT
);

CREATE TABLE IF NOT EXISTS "Event Log" (id INTEGER PRIMARY KEY, kv_id INTEGER, note TEXT);

CREATE INDEX IF NOT EXISTS kv_score ON kv (score);

-- The trigger's body has semicolons of its own.
CREATE TRIGGER IF NOT EXISTS log_first_kv AFTER INSERT ON kv
WHEN new.id = 1
BEGIN
  INSERT INTO "Event Log" (kv_id, note) VALUES (new.id, 'first; row');
END;

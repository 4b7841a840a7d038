-- Rows the generated table does not make.
INSERT INTO "Event Log" (id, kv_id, note) VALUES (100, 0, 'it''s; loaded');
INSERT INTO "Event Log" (id, kv_id, note) VALUES (101, 0, 'second')

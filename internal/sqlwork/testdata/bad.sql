CREATE TABLE ok1 (id INTEGER);

-- the next statement is wrong
CREATE TABLE bad (id INTEGER PRIMARY KEY,, x);

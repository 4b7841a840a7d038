-- The table pgbench -i creates and bench/pg-select.yaml reads. Headroom
-- runs this script only when the table is missing; with pgbench's data in
-- place (phases.populate: false) it does nothing.
CREATE TABLE IF NOT EXISTS pgbench_accounts (
    aid      integer NOT NULL PRIMARY KEY,
    bid      integer,
    abalance integer,
    filler   character(84)
);

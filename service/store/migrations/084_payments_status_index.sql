-- Fewer index entries written per payment (issue 51: database time per paid operation on the embedded database).
-- Every payment row written (reserved, bound to its operation, settled) wrote an entry into each of the table's indexes.
-- payments_status_idx (status) is the first column of payments_status_created_idx (status, created_at, id, migration
-- 080), which serves every lookup by status it served (the console's filters and counts, the open payments' sweep, the
-- settlement nonces in use): the entry it held is written no more.
DROP INDEX payments_status_idx;

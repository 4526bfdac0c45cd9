-- Fewer index entries per paid operation (issue 51).
-- Room on each page for a row's next version: an update that changes no indexed column (a batch's outcome; a
-- transaction broadcast, then confirmed) stays on its page as a HOT update and adds no index entry. With full pages
-- such updates moved to another page and added an entry to each of the table's indexes (ten for batches, four for
-- batch_transactions). Applies to the pages the tables fill from now on.
ALTER TABLE batches SET (fillfactor = 80);
ALTER TABLE batch_transactions SET (fillfactor = 80);
-- A payment's subject is looked up among released payments only when none is open or settled (Payments.bySubject):
-- the open one is in payments_open_subject already, so the full index gave every version of every payment an entry
-- that only released ones need.
DROP INDEX payments_subject_idx;
CREATE INDEX payments_released_subject_idx ON payments (subject, created_at) WHERE status = 'released';

-- Delivery claims: a run takes a lease on a (day, subscriber) row before sending, so two runs of
-- the same day never mail the same reader. States: pending -> sending (claimed) -> sent | failed.
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check
    CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'outbox'));
-- The claimant: a random token under which its session holds an advisory lock while it sends, so a
-- later run can tell a live claim (skip it) from one left by a crashed process (take it over).
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS claim_token integer;
-- Backstop when the claimant's session is alive but stuck: the claim lapses at this time.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS claimed_until timestamptz;
-- Set (and committed) just before the message is handed to the SMTP server: a claim taken over
-- with this set is the one case where the reader may already have the message.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS handed_over_at timestamptz;
-- Number of times a claim was taken over after the message may already have been accepted.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS uncertain_resends integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS deliveries_due_idx ON deliveries (digest_date, status) WHERE status IN ('pending', 'sending', 'failed');

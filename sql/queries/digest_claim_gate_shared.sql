-- Taken in the claim's own transaction before it reads: a claim in flight holds the gate shared
-- until it commits (claims of two runs share it), so a run counting what is left can wait for it.
-- Key (space, 0): 0 is never a run's token.
SELECT pg_advisory_xact_lock_shared(%(lock_space)s, 0)

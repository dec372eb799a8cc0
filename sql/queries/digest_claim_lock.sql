-- This run's claimant identity: a session advisory lock (space, token) held while it delivers. It
-- disappears with the session, so a crashed run's claims are recognisably dead.
SELECT pg_try_advisory_lock(%(lock_space)s, %(token)s)

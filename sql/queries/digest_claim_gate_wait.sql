-- Before counting what is left of the day: wait until no claim is in flight. A row another run is
-- claiming at this instant is locked but still reads 'pending'; counted then, it would look
-- outstanding though that run is about to send it. Held until the count's transaction commits.
SELECT pg_advisory_xact_lock(%(lock_space)s, 0)

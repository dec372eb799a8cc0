SELECT pg_advisory_lock(%s)

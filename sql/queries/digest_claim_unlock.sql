SELECT pg_advisory_unlock(%(lock_space)s, %(token)s)

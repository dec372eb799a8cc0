-- One writer per output directory at a time (session lock: the run commits several times).
SELECT pg_advisory_lock(hashtext('newsdedup.publish:' || %(output_dir)s))

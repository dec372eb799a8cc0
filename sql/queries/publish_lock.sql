-- One writer per output directory at a time (released at commit).
SELECT pg_advisory_xact_lock(hashtext('newsdedup.publish:' || %(output_dir)s))

-- The newest hour already written into this output directory.
SELECT last_partition FROM publish_state WHERE output_dir = %(output_dir)s

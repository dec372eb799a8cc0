-- Re-materialising H (or, with later_partitions = reset, every partition after H): remove the
-- explanation rows those partitions wrote before redoing them (stories deleted take theirs along).
DELETE FROM story_decisions
 WHERE partition_hour = %(h)s OR (%(later)s AND partition_hour > %(h)s)

-- Re-materialising H (or, with later_partitions = reset, every partition after H): remove the
-- explanation rows those partitions wrote before redoing them (stories deleted take theirs along).
WITH edges AS (
    DELETE FROM story_edges
     WHERE partition_hour = %(h)s OR (%(later)s AND partition_hour > %(h)s)
)
DELETE FROM story_cut_groups
 WHERE partition_hour = %(h)s OR (%(later)s AND partition_hour > %(h)s)

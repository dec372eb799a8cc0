-- The first and last hour that hold items: the range a re-embedding's backfill covers.
SELECT min(partition_hour), max(partition_hour) FROM items

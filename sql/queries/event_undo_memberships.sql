-- Rerun of partition hour %(hour)s: forget the memberships it wrote (they are recomputed).
DELETE FROM event_stories WHERE partition_hour = %(hour)s RETURNING event_id

-- Idempotency: remove what a previous run of hour H decided.
DELETE FROM item_duplicates WHERE partition_hour = %(hour)s

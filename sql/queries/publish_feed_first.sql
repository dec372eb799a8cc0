-- When each language's feed first published an entry (its feed id is minted from that date):
-- the first hour written, which a later story with an earlier first article cannot move.
SELECT lang, min(first_partition) FROM publish_entries GROUP BY lang

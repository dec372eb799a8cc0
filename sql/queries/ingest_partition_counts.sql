-- Items owned by one partition hour, per source (for asset metadata).
SELECT source_id, count(*) AS items
  FROM item_sources
 WHERE partition_hour = %(partition_hour)s
 GROUP BY source_id
 ORDER BY source_id

-- Hours each stage has reached, for `newsdedup db status`: fetched (the feed archive) and
-- clustered (items placed in stories), as partition keys in UTC.
SELECT 'fetched' AS stage, count(DISTINCT partition_hour),
       to_char(min(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00'),
       to_char(max(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00')
  FROM feed_fetches
UNION ALL
SELECT 'clustered', count(DISTINCT partition_hour),
       to_char(min(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00'),
       to_char(max(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00')
  FROM story_items

-- name: advisory_xact_lock
-- Transaction advisory lock on one key; each caller has its own (clustering, events, the model switch).
SELECT pg_advisory_xact_lock(%s)

-- name: server_now
-- The server's time at the start of the transaction.
SELECT now()

-- name: story_outlet_countries
-- The countries of the outlets that carried the given stories, one row per story and country:
-- the country of an item's own feed, none for an aggregator's item (the aggregator's country is
-- not the publisher's).
SELECT DISTINCT sa.story_id, upper(btrim(src.country)) AS country
  FROM story_articles sa
  JOIN items i ON i.id = sa.item_id
  JOIN sources src ON src.id = i.source_id
 WHERE sa.story_id = ANY(%(story_ids)s) AND NOT src.syndicator AND coalesce(btrim(src.country), '') <> ''
 ORDER BY 1, 2

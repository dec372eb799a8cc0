-- Every member (anchor + duplicates) of the given anchors' groups, with the hour that decided
-- each duplicate (NULL for the anchor itself).
SELECT g.anchor, i.id, i.title, coalesce(i.lang, s.language), i.url, s.syndicator, i.published_at, g.decided
  FROM (SELECT a.anchor, a.anchor, NULL::timestamptz FROM unnest(%(anchors)s::text[]) AS a(anchor)
        UNION ALL
        SELECT d.canonical_item_id, d.item_id, d.partition_hour FROM item_duplicates d
         WHERE d.canonical_item_id = ANY(%(anchors)s)) AS g(anchor, member, decided)
  JOIN items i ON i.id = g.member
  JOIN sources s ON s.id = i.source_id
 ORDER BY g.anchor, i.id

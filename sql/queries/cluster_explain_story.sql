-- `newsdedup explain`: the story by id or unique id prefix, with its representative headline.
SELECT s.id, r.title, s.created_partition, s.item_count
  FROM stories s
  LEFT JOIN items r ON r.id = s.representative_item_id
 WHERE s.id = %(id)s OR (s.id LIKE %(prefix)s AND NOT EXISTS (SELECT 1 FROM stories x WHERE x.id = %(id)s))
 LIMIT 2

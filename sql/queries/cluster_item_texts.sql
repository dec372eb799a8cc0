-- Headline, summary and language of items (the anchor check, shared/text/anchors.py).
SELECT i.id, i.title, i.summary, i.lang
  FROM items i
 WHERE i.id = ANY(%(ids)s)

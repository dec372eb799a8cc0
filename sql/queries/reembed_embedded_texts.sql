-- Every canonical item with a vector of the model: what its embedded text is made of now (headline,
-- feed summary, the page's first paragraph) and the hash of the text its stored vector came from.
SELECT i.id, i.title, i.summary, a.lead AS page_lead, e.text_hash, i.partition_hour
  FROM item_embeddings e
  JOIN items i ON i.id = e.item_id
  LEFT JOIN article_texts a ON a.item_id = i.id AND a.status = 'ok'
 WHERE e.model = %(model)s
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)

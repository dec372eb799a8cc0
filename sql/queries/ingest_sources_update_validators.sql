-- Store the ETag / Last-Modified a live fetch returned (each may change on its own).
UPDATE sources AS s
   SET etag = t.etag, last_modified = t.last_modified, updated_at = now()
  FROM unnest(%(ids)s::text[], %(etags)s::text[], %(last_modifieds)s::text[]) AS t(id, etag, last_modified)
 WHERE s.id = t.id
   AND (s.etag, s.last_modified) IS DISTINCT FROM (t.etag, t.last_modified)

-- Remember what the archived days' pages now show.
UPDATE publish_archive_days a
   SET page_hash = u.page_hash
  FROM unnest(%(days)s::date[], %(page_hashes)s::text[]) AS u(day, page_hash)
 WHERE a.output_dir = %(output_dir)s AND a.lang = %(lang)s AND a.day = u.day

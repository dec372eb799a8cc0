-- The stories' HTML of the archived days whose page is written again.
SELECT day, stories_html
  FROM publish_archive_days
 WHERE output_dir = %(output_dir)s AND lang = %(lang)s AND day = ANY(%(days)s)

-- Every archived day of one language in one output directory, oldest first, without its HTML.
SELECT day, stories_hash, story_count, page_hash
  FROM publish_archive_days
 WHERE output_dir = %(output_dir)s AND lang = %(lang)s
 ORDER BY day

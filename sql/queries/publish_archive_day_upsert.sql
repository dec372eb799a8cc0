-- The front page's stories of one day in one language, as the hour just published shows them.
INSERT INTO publish_archive_days (output_dir, lang, day, stories_html, stories_hash, story_count)
VALUES (%(output_dir)s, %(lang)s, %(day)s, %(stories_html)s, %(stories_hash)s, %(story_count)s)
ON CONFLICT (output_dir, lang, day) DO UPDATE
   SET stories_html = EXCLUDED.stories_html, stories_hash = EXCLUDED.stories_hash,
       story_count = EXCLUDED.story_count
 WHERE publish_archive_days.stories_hash IS DISTINCT FROM EXCLUDED.stories_hash

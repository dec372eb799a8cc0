-- Finished narrative translations (status 0) of the events of the selected stories.
SELECT event_id, lang, title, narrative
  FROM event_translations
 WHERE event_id = ANY(%(event_ids)s) AND status = 0

-- One rendered digest per (day, language, edition); a rerun replaces it and keeps its id (deliveries
-- point at it).
INSERT INTO digests (digest_date, lang, edition, subject, html, text_body, story_ids, event_ids, outbox_path,
                     text_path)
VALUES (%(day)s, %(lang)s, %(edition)s, %(subject)s, %(html)s, %(text)s, %(story_ids)s, %(event_ids)s,
        %(html_path)s, %(text_path)s)
ON CONFLICT (digest_date, lang, edition) DO UPDATE
   SET subject = EXCLUDED.subject, html = EXCLUDED.html, text_body = EXCLUDED.text_body,
       story_ids = EXCLUDED.story_ids, event_ids = EXCLUDED.event_ids,
       outbox_path = EXCLUDED.outbox_path, text_path = EXCLUDED.text_path, updated_at = now()
RETURNING id

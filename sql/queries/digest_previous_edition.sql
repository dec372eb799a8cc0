-- The stories and events of the reader's previous edition: the same language and edition, the day before.
SELECT story_ids, event_ids FROM digests WHERE digest_date = %(day)s AND lang = %(lang)s AND edition = %(edition)s

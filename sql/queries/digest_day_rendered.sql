-- The rendered digests of a day, every language and edition, as delivery takes them.
SELECT id, subject, html, text_body FROM digests WHERE digest_date = %(day)s

-- The rendered digests of a day: which id each (language, edition) has.
SELECT lang, edition, id FROM digests WHERE digest_date = %(day)s

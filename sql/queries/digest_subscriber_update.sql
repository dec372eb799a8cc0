-- Change some of an active subscriber's choices; a NULL parameter leaves that choice as it is.
UPDATE subscribers
   SET lang = coalesce(%(lang)s, lang), also_reads = coalesce(%(also_reads)s, also_reads),
       categories = coalesce(%(categories)s, categories), countries = coalesce(%(countries)s, countries),
       delivery_time = coalesce(%(delivery_time)s, delivery_time), time_zone = coalesce(%(time_zone)s, time_zone)
 WHERE email = %(email)s AND active
RETURNING id, lang, also_reads, categories, countries, delivery_time, time_zone

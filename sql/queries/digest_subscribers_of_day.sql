-- The readers a day goes to (subscribed by its end, %(day_end)s) with their choices.
SELECT id, email, lang, also_reads, categories, countries, delivery_time, time_zone
  FROM subscribers
 WHERE active AND subscribed_at < %(day_end)s
 ORDER BY id

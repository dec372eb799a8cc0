-- One of the demo's sample readers (commands/demo_readers.py), subscribed from the start of the
-- sample day so that day's edition is theirs; run again, the same reader with the same choices.
INSERT INTO subscribers (email, lang, also_reads, categories, countries, delivery_time, time_zone, subscribed_at)
VALUES (%(email)s, %(lang)s, %(also_reads)s, %(categories)s, %(countries)s, %(delivery_time)s, %(time_zone)s,
        %(subscribed_at)s)
ON CONFLICT (email) DO UPDATE
   SET lang = EXCLUDED.lang, also_reads = EXCLUDED.also_reads, categories = EXCLUDED.categories,
       countries = EXCLUDED.countries, delivery_time = EXCLUDED.delivery_time, time_zone = EXCLUDED.time_zone,
       active = true, subscribed_at = least(subscribers.subscribed_at, EXCLUDED.subscribed_at)

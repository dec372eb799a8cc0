-- Add or reactivate a subscriber with their choices (stages/digest/editions.py). A removed reader added
-- again starts a new subscription: a new subscription time and a new unsubscribe token (links in the
-- mails of the old subscription no longer work).
INSERT INTO subscribers (email, lang, also_reads, categories, countries, delivery_time, time_zone, active)
VALUES (%(email)s, %(lang)s, %(also_reads)s, %(categories)s, %(countries)s, %(delivery_time)s, %(time_zone)s, true)
ON CONFLICT (email) DO UPDATE
   SET lang = EXCLUDED.lang, also_reads = EXCLUDED.also_reads, categories = EXCLUDED.categories,
       countries = EXCLUDED.countries, delivery_time = EXCLUDED.delivery_time, time_zone = EXCLUDED.time_zone,
       active = true,
       subscribed_at = CASE WHEN subscribers.active THEN subscribers.subscribed_at ELSE now() END,
       unsubscribed_at = NULL,
       unsubscribe_token = CASE WHEN subscribers.active THEN subscribers.unsubscribe_token
                                ELSE EXCLUDED.unsubscribe_token END
RETURNING id, (xmax = 0) AS inserted

SELECT s.id, s.email, s.lang, s.active, s.created_at,
       (SELECT max(d.sent_at) FROM deliveries d WHERE d.subscriber_id = s.id) AS last_delivery,
       s.also_reads, s.categories, s.countries, s.delivery_time, s.time_zone
  FROM subscribers s
 WHERE s.active OR %(include_inactive)s
 ORDER BY s.email

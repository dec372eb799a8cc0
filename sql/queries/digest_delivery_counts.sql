-- Delivery status counts for the day (asset metadata).
SELECT status, permanent, count(*) FROM deliveries WHERE digest_date = %(day)s GROUP BY status, permanent

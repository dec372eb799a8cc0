-- Deactivate a subscriber: the delivery log keeps its history.
UPDATE subscribers SET active = false, unsubscribed_at = now() WHERE email = %(email)s AND active RETURNING id

-- Deactivate a subscriber: the delivery log keeps its history.
UPDATE subscribers SET active = false WHERE email = %(email)s AND active RETURNING id

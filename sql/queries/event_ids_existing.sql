SELECT id FROM events WHERE id = ANY(%s)

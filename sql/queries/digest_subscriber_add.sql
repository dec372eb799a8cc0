-- Add or reactivate a subscriber (and update the language). A removed reader added again starts a
-- new subscription: a new subscription time and a new unsubscribe token (links in the mails of the
-- old subscription no longer work).
INSERT INTO subscribers (email, lang, active) VALUES (%(email)s, %(lang)s, true)
ON CONFLICT (email) DO UPDATE
   SET lang = EXCLUDED.lang, active = true,
       subscribed_at = CASE WHEN subscribers.active THEN subscribers.subscribed_at ELSE now() END,
       unsubscribed_at = NULL,
       unsubscribe_token = CASE WHEN subscribers.active THEN subscribers.unsubscribe_token
                                ELSE EXCLUDED.unsubscribe_token END
RETURNING id, (xmax = 0) AS inserted

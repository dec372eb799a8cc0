-- Subscriptions: when each began (a day's digest goes only to readers subscribed by the end of that
-- day) and the reader's unsubscribe token.

-- When the current subscription began: set on insert, reset when a removed reader is added again.
-- Existing readers subscribed when their row was created.
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS subscribed_at timestamptz;
UPDATE subscribers SET subscribed_at = created_at WHERE subscribed_at IS NULL;
ALTER TABLE subscribers ALTER COLUMN subscribed_at SET DEFAULT now();
ALTER TABLE subscribers ALTER COLUMN subscribed_at SET NOT NULL;

-- When the reader left (NULL while subscribed).
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS unsubscribed_at timestamptz;

-- The token of the reader's unsubscribe link (List-Unsubscribe and the digest's footer): 244 random
-- bits (two version-4 UUIDs) as 64 hex digits, nothing derived from the address. Every message of a
-- subscription carries the same token (a resend after a crash is the same message); a new one is
-- drawn when a removed reader is added again. The volatile default gives every existing row its own.
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS unsubscribe_token text NOT NULL
    DEFAULT replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '');
CREATE UNIQUE INDEX IF NOT EXISTS subscribers_unsubscribe_token_idx ON subscribers (unsubscribe_token);

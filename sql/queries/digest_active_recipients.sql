-- Active subscribers (outbox-only delivery is refused while there are any, unless intended).
SELECT count(*) FROM subscribers WHERE active

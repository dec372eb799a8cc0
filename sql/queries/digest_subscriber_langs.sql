-- Languages active subscribers asked for (each gets a rendered digest).
SELECT DISTINCT lang FROM subscribers WHERE active ORDER BY lang

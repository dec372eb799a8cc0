-- The figures stored for partition H: stories whose score and briefing it wrote (what a rerun of
-- the hour that changes nothing reports, instead of zeros).
SELECT (SELECT count(*) FROM story_scores WHERE partition_hour = %(hour)s) AS scored,
       (SELECT count(*) FROM story_briefings WHERE partition_hour = %(hour)s) AS briefed

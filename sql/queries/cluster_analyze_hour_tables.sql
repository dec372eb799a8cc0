-- Fresh planner statistics for the tables the clustering transaction just wrote, before the
-- checks read the hour back: statistics taken before its commit see an empty hour, and a
-- 20,000-item hour's invariant check planned on them ran for minutes (bench/hour.py --scale 10).
ANALYZE story_items, stories, item_duplicates

-- This transaction's snapshot, for other sessions to read the same state through (SET TRANSACTION
-- SNAPSHOT): parallel KNN workers, the background publisher. Valid while the transaction stays open.
SELECT pg_export_snapshot()

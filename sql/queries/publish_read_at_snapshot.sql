-- Publish an hour from the database exactly as the run left it when the hour's other stages ended
-- (a snapshot the run exported, see snapshot_export.sql), while the run goes on with the next hour.
-- The first statements of the publishing transaction; {snapshot} is a checked snapshot id literal.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SET TRANSACTION SNAPSHOT {snapshot}

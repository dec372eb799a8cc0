-- Publish an hour from the database exactly as the run left it when the hour's other stages ended
-- (a snapshot the run exported), while the run goes on with the next hour. The first statement
-- of the publishing transaction; db.set_transaction_snapshot follows it.
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ

-- Undo a previous run of this hour: the joins its anchor check refused are decided again.
DELETE FROM event_vetoes WHERE partition_hour = %(hour)s

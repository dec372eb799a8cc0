-- A source recovered (or was disabled or removed): its alert is no longer open.
DELETE FROM source_alerts
 WHERE source_id = %(source_id)s

INSERT INTO publish_state (output_dir, last_partition, written_at)
VALUES (%(output_dir)s, %(partition)s, now())
ON CONFLICT (output_dir) DO UPDATE
   SET last_partition = greatest(publish_state.last_partition, EXCLUDED.last_partition), written_at = now()

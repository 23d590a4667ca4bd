-- rollout_stats v2's closedBy (schemas/rollout_stats/v2.avsc): the batch's groups by the reason their assembly
-- closed them (full, idle, timeout, evicted), as a map in parallel <name>_keys/<name>_values arrays like
-- dropped_by_reason. Rows written before it read empty arrays.
-- 18.16 has no ADD COLUMN IF NOT EXISTS: one column per statement, and the migration runner takes a column
-- that is already there as added, so the migration can run again after an interruption.
ALTER TABLE rollout_stats ADD COLUMN closed_by_keys Array(String) AFTER dropped_by_reason_values;
ALTER TABLE rollout_stats ADD COLUMN closed_by_values Array(UInt32) AFTER closed_by_keys;

-- The lease store this deployment's workers use (redis, database, etcd): a lease in one store does not
-- keep out a holder of another, and their tokens do not order, so every process of a deployment must
-- use the same. The first worker records its choice; a process with another one is refused. A database
-- that already holds fenced rows got them from Redis, the only store before this column.
ALTER TABLE settlement_deployment ADD COLUMN IF NOT EXISTS lease_store VARCHAR(32);
UPDATE settlement_deployment SET lease_store = 'redis'
WHERE lease_store IS NULL AND EXISTS (SELECT 1 FROM refund WHERE fence > 0);

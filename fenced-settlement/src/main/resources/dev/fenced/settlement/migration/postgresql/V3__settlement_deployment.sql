-- This database's deployment: one random id, made once. The settlement worker names it, with the
-- merchant and the refund id, in the metadata of every refund it sends, and refuses a refund under a
-- row's key that names another owner. Keys are unique within a database only: rows that existed
-- before keys were kept on the row have their refund id as key (V2), and two deployments sharing a
-- gateway can hold such a row with the same id, merchant and amount. A copy of the database keeps the
-- id; give a copy that shares the gateway its own (UPDATE settlement_deployment SET id = ...).
CREATE TABLE IF NOT EXISTS settlement_deployment (
    id         VARCHAR(64) PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO settlement_deployment (id)
SELECT gen_random_uuid()::text WHERE NOT EXISTS (SELECT 1 FROM settlement_deployment);

-- Every refund carries its own idempotency key, unique across merchants, tables and deployments, so
-- that a reused refund id (a second deployment sharing the gateway, an id prefix reused after an
-- archive) can never match another refund at the gateway. Every attempt and lookup sends this key.
ALTER TABLE refund ADD COLUMN IF NOT EXISTS idempotency_key VARCHAR(64) NULL;
-- Rows that exist already keep the key they were sent with before this column: their refund id. A
-- row left in sending is then found at the gateway under that key, never sent again under a new one.
UPDATE refund SET idempotency_key = id WHERE idempotency_key IS NULL;
ALTER TABLE refund MODIFY idempotency_key VARCHAR(64) NOT NULL DEFAULT (UUID());
CREATE UNIQUE INDEX IF NOT EXISTS refund_idempotency_key ON refund (idempotency_key);
-- One set of refunds per merchant: two seeds of one merchant at the same time cannot both insert.
CREATE UNIQUE INDEX IF NOT EXISTS refund_merchant_seq_unique ON refund (merchant, seq);
DROP INDEX IF EXISTS refund_merchant_seq ON refund;

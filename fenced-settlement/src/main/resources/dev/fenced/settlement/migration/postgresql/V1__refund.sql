-- The article's refund table, owned by the settlement worker. Every protected write carries the
-- holder's token in fence; every gateway call carries the row's own idempotency key, unique across
-- merchants, tables and deployments. A table created by an earlier release is left as it is here
-- and brought up to date by V2, which also makes the unique indexes.
CREATE TABLE IF NOT EXISTS refund (
    id                VARCHAR(64)    PRIMARY KEY,
    merchant          VARCHAR(64)    NOT NULL,
    seq               INTEGER        NOT NULL,
    amount            NUMERIC(12, 2) NOT NULL CHECK (amount > 0),
    currency          CHAR(3)        NOT NULL,
    state             VARCHAR(16)    NOT NULL DEFAULT 'pending',
    fence             BIGINT         NOT NULL DEFAULT 0,
    idempotency_key   VARCHAR(64)    NOT NULL DEFAULT gen_random_uuid()::text,
    gateway_reference VARCHAR(64),
    failure_reason    VARCHAR(500),
    updated_at        TIMESTAMPTZ    NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS refund_merchant_state ON refund (merchant, state);

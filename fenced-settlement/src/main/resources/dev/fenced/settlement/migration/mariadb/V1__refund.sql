-- The article's refund table, owned by the settlement worker. Every protected write carries the
-- holder's token in fence; every gateway call carries the row's own idempotency key, unique across
-- merchants, tables and deployments. A table created by an earlier release is left as it is here
-- and brought up to date by V2, which also makes the unique indexes.
CREATE TABLE IF NOT EXISTS refund (
    id                VARCHAR(64)    NOT NULL PRIMARY KEY,
    merchant          VARCHAR(64)    NOT NULL,
    seq               INT            NOT NULL,
    amount            DECIMAL(12, 2) NOT NULL CHECK (amount > 0),
    currency          CHAR(3)        NOT NULL,
    state             VARCHAR(16)    NOT NULL DEFAULT 'pending',
    fence             BIGINT         NOT NULL DEFAULT 0,
    idempotency_key   VARCHAR(64)    NOT NULL DEFAULT (UUID()),
    gateway_reference VARCHAR(64),
    failure_reason    VARCHAR(500),
    updated_at        TIMESTAMP(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    INDEX refund_merchant_state (merchant, state)
) ENGINE = InnoDB;

-- The article's refund table. Every protected write carries the holder's token in fence.
CREATE TABLE IF NOT EXISTS refund (
    id                VARCHAR(64)    PRIMARY KEY,
    merchant          VARCHAR(64)    NOT NULL,
    seq               INTEGER        NOT NULL,
    amount            NUMERIC(12, 2) NOT NULL CHECK (amount > 0),
    currency          CHAR(3)        NOT NULL,
    state             VARCHAR(16)    NOT NULL DEFAULT 'pending',
    fence             BIGINT         NOT NULL DEFAULT 0,
    gateway_reference VARCHAR(64),
    failure_reason    VARCHAR(500),
    updated_at        TIMESTAMPTZ    NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS refund_merchant_state ON refund (merchant, state);
CREATE INDEX IF NOT EXISTS refund_merchant_seq ON refund (merchant, seq);

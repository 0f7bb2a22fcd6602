-- The settlement journal, in a store of its own: one line per confirmed refund, appended through a
-- fenced transaction (FencedTransactions) under the token of the run that wrote it. Append-only and
-- with no unique refund id on purpose: the guard, not a constraint, keeps it one line per refund.
CREATE TABLE IF NOT EXISTS settlement_journal (
    id                BIGSERIAL      PRIMARY KEY,
    merchant          VARCHAR(64)    NOT NULL,
    refund_id         VARCHAR(64)    NOT NULL,
    amount            NUMERIC(12, 2) NOT NULL,
    currency          CHAR(3)        NOT NULL,
    gateway_reference VARCHAR(64)    NOT NULL,
    token             BIGINT         NOT NULL, -- the token that confirmed the refund (the refund row's fence)
    written_by        BIGINT         NOT NULL, -- the token of the fenced transaction that wrote the line
    written_at        TIMESTAMPTZ    NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS settlement_journal_merchant ON settlement_journal (merchant, refund_id);

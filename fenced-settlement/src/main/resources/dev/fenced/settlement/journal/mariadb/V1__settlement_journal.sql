-- The settlement journal, in a store of its own: one line per confirmed refund, appended through a
-- fenced transaction (FencedTransactions) under the token of the run that wrote it. Append-only and
-- with no unique refund id on purpose: the guard, not a constraint, keeps it one line per refund.
CREATE TABLE IF NOT EXISTS settlement_journal (
    id                BIGINT         NOT NULL AUTO_INCREMENT PRIMARY KEY,
    merchant          VARCHAR(64)    NOT NULL,
    refund_id         VARCHAR(64)    NOT NULL,
    amount            DECIMAL(12, 2) NOT NULL,
    currency          CHAR(3)        NOT NULL,
    gateway_reference VARCHAR(64)    NOT NULL,
    token             BIGINT         NOT NULL,
    written_by        BIGINT         NOT NULL,
    written_at        TIMESTAMP(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    INDEX settlement_journal_merchant (merchant, refund_id)
) ENGINE = InnoDB;

-- One row per resource that fenced transactions enter (FencedTransactions): the highest token that
-- entered it. Its row lock orders the transactions of an old token before the first of a new one.
-- A binary collation: 'settle:M_1' and 'settle:m_1' are two resources with two counters, so two guards.
CREATE TABLE IF NOT EXISTS fence_guard (
    resource VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    fence    BIGINT       NOT NULL
) ENGINE = InnoDB;

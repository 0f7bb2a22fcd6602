-- One row per resource that fenced transactions enter (FencedTransactions): the highest token that
-- entered it. Its row lock orders the transactions of an old token before the first of a new one.
CREATE TABLE IF NOT EXISTS fence_guard (
    resource VARCHAR(200) PRIMARY KEY,
    fence    BIGINT       NOT NULL
);

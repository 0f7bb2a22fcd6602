CREATE TABLE IF NOT EXISTS sample_ledger (
    id BIGSERIAL PRIMARY KEY,
    account TEXT NOT NULL,
    token BIGINT NOT NULL,
    amount NUMERIC(12, 2) NOT NULL
);

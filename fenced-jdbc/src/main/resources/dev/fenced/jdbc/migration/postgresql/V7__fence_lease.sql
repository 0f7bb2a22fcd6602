-- One row per resource for JdbcLeaseStore: the lease (owner_id, expires_at by the database's clock) and the
-- highest token granted for the resource, drawn from fence_token_seq. A release ends the lease and keeps the
-- row, so a later takeover is checked against the token stored here (token < the new one) and never goes back.
-- owner_id is null once released: at most 200 characters of owner label, '/', a 36-character UUID.
CREATE TABLE IF NOT EXISTS fence_lease (
    resource   VARCHAR(200) PRIMARY KEY,
    owner_id   VARCHAR(240),
    token      BIGINT       NOT NULL,
    expires_at TIMESTAMPTZ  NOT NULL
);

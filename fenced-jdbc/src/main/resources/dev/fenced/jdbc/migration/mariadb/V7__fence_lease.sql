-- One row per resource for JdbcLeaseStore: the lease (owner_id, expires_at by the database's clock) and the
-- highest token granted for the resource, drawn from fence_token_seq. A release ends the lease and keeps the
-- row, so a later takeover is checked against the token stored here (token < the new one) and never goes back.
-- expires_at is UTC, written and compared with UTC_TIMESTAMP(3) only: a DATETIME in the session's time zone
-- would make two clients in different zones (or one across a DST change) disagree on when a lease ends, and a
-- TIMESTAMP converts through the session's zone on every write (ambiguous in the hour a clock falls back).
-- A binary collation: 'settle:M_1' and 'settle:m_1' are two resources, as in fence_guard.
CREATE TABLE IF NOT EXISTS fence_lease (
    resource   VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    owner_id   VARCHAR(240) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
    token      BIGINT       NOT NULL,
    expires_at DATETIME(3)  NOT NULL
) ENGINE = InnoDB;

-- One row per resource; tokens come from an atomic upsert, so they survive the loss of Redis.
CREATE TABLE IF NOT EXISTS fence_counter (
    resource VARCHAR(200) PRIMARY KEY,
    value    BIGINT       NOT NULL
);

-- One row per resource; tokens come from LAST_INSERT_ID(value + 1), so they survive the loss of Redis.
CREATE TABLE IF NOT EXISTS fence_counter (
    resource VARCHAR(200) NOT NULL PRIMARY KEY,
    value    BIGINT       NOT NULL
) ENGINE = InnoDB;

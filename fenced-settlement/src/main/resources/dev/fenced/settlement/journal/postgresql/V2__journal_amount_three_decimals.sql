-- The journal keeps a refund's amount as exactly as the refund table does: three decimals (KWD,
-- BHD, ...), which NUMERIC(12, 2) rounded away silently. Safe to run again.
ALTER TABLE settlement_journal ALTER COLUMN amount TYPE NUMERIC(13, 3);

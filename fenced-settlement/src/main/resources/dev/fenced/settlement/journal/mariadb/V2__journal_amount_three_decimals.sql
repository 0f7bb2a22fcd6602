-- The journal keeps a refund's amount as exactly as the refund table does: three decimals (KWD,
-- BHD, ...), which DECIMAL(12, 2) rounded away with only a note. Safe to run again.
ALTER TABLE settlement_journal MODIFY amount DECIMAL(13, 3) NOT NULL;

-- updated_at moves with every change of a refund row (claim, confirm, fail, put back, a repair, an
-- operator's UPDATE), as MariaDB's ON UPDATE CURRENT_TIMESTAMP(3) does: the fenced UPDATEs are the
-- library's, generic over tables, and do not name the column. Like MariaDB, it fires only when a
-- value changes, and an UPDATE that sets updated_at itself keeps its value. Safe to run again.
CREATE OR REPLACE FUNCTION refund_touch_updated_at() RETURNS trigger AS $$
BEGIN
    IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
        NEW.updated_at := statement_timestamp();
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS refund_updated_at ON refund;
CREATE TRIGGER refund_updated_at BEFORE UPDATE ON refund
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION refund_touch_updated_at();

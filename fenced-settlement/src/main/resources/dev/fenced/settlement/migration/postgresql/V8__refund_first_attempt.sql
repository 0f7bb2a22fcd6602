-- When a refund's first request may have gone to the gateway: the first claim into sending. A
-- provider keeps an idempotency key for a limited time (Stripe: 24 hours); past it, a request under
-- the same key makes a second refund, so the worker must know how old a row's key is before it
-- sends or trusts a lookup by key. Set by the database, on its clock, by a trigger: the fenced
-- claim is the library's generic UPDATE and does not name the column. A row put back to pending
-- keeps the time of its first claim; only a repair that retries a refused row clears it. Rows
-- claimed before this migration keep none: their age is unknown (updated_at moved with every
-- takeover since their first request), and the worker looks such a row in sending up by its key
-- and then by reference before it sends it. Safe to run again.
ALTER TABLE refund ADD COLUMN IF NOT EXISTS first_attempt_at TIMESTAMPTZ;
CREATE OR REPLACE FUNCTION refund_stamp_first_attempt() RETURNS trigger AS $$
BEGIN
    NEW.first_attempt_at := statement_timestamp();
    RETURN NEW;
END
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS refund_first_attempt ON refund;
CREATE TRIGGER refund_first_attempt BEFORE UPDATE ON refund
    FOR EACH ROW WHEN (NEW.state = 'sending' AND NEW.first_attempt_at IS NULL) EXECUTE FUNCTION refund_stamp_first_attempt();

-- The guard's row read with its shared lock, its own round trip: what FencedTransactions.enter sends.
BEGIN;
SELECT fence FROM guard WHERE resource = 'm_4471' FOR SHARE;
INSERT INTO work(v) VALUES (1);
COMMIT;

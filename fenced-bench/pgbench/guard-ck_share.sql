-- The check pipelined with the COMMIT: what FencedTransactions.commit sends on PostgreSQL.
BEGIN;
INSERT INTO work(v) VALUES (1);
\startpipeline
SELECT 1 / (SELECT COUNT(*)::int FROM (SELECT 1 FROM guard WHERE resource = 'm_4471' AND fence = 34 FOR SHARE) g);
COMMIT;
\endpipeline

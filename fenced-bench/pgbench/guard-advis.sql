-- An advisory lock in place of the row lock, pipelined with the read: one round trip.
BEGIN;
\startpipeline
SELECT pg_advisory_xact_lock_shared(4471);
SELECT fence FROM guard WHERE resource = 'm_4471';
\endpipeline
INSERT INTO work(v) VALUES (1);
COMMIT;

-- One more statement pipelined with the COMMIT, and no check: the floor.
BEGIN;
INSERT INTO work(v) VALUES (1);
\startpipeline
SELECT 1;
COMMIT;
\endpipeline

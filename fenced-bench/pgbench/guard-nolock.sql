-- The same read without its lock: not safe, only to locate the cost.
BEGIN;
SELECT fence FROM guard WHERE resource = 'm_4471';
INSERT INTO work(v) VALUES (1);
COMMIT;

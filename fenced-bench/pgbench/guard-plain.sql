-- The transaction without a guard.
BEGIN;
INSERT INTO work(v) VALUES (1);
COMMIT;

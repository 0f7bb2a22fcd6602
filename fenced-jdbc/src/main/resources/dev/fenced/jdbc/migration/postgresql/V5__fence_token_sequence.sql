-- One sequence for JdbcSequenceTokenSource: tokens for every resource from one nextval, which needs
-- no commit of its own and never goes back (after a crash it may skip ahead). CACHE 1, the default,
-- on purpose: per-session caches would hand a later holder a lower token than an earlier one.
CREATE SEQUENCE IF NOT EXISTS fence_token_seq START WITH 1 INCREMENT BY 1 NO CYCLE CACHE 1;

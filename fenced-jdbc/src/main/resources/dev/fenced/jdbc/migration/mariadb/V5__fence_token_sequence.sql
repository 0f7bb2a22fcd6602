-- One sequence for JdbcSequenceTokenSource: tokens for every resource from one NEXTVAL, which needs
-- no commit of its own and never goes back (after a restart it may skip ahead). NOCACHE on purpose:
-- a cache is kept per server, and where more than one server issues values (a Galera cluster) each
-- would hand out its own range, a later holder a lower token than an earlier one.
CREATE SEQUENCE IF NOT EXISTS fence_token_seq START WITH 1 INCREMENT BY 1 NOCYCLE NOCACHE;

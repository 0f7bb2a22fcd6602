-- Epochs of Redis-issued tokens (RedisLeaseStore with tokenEpochs, JdbcSequenceTokenSource.epochs):
-- one nextval when a resource is first acquired and each time Redis may have lost its tokens.
-- MAXVALUE 2^39 - 1: a token is epoch << 24 | counter. CACHE 1 for the same reason as fence_token_seq:
-- an epoch must be above every earlier one.
CREATE SEQUENCE IF NOT EXISTS fence_epoch_seq START WITH 1 INCREMENT BY 1 MAXVALUE 549755813887 NO CYCLE CACHE 1;

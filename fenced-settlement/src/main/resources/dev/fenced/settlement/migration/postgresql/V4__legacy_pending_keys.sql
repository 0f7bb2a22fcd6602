-- A pending row whose key is still its refund id (V2's key for a row that existed before keys were
-- kept on the row) gets a random key, as every new row has: a refund id is unique within one database
-- only, and two deployments sharing a gateway can hold a row of the same id, merchant and amount, whose
-- refunds would then meet under one key. A pending row was never sent: every call comes after the
-- row's claim, and a row goes back to pending only when its request never reached the gateway, or
-- (reconcile --retry-failed) when no refund exists under its key. A row in sending keeps its key,
-- the one its call may have gone out with (a refund another deployment made under it is refused by
-- owner, V3); sent and failed rows are done. Stop the workers of the earlier release first: one that
-- read a pending row before this ran would send it under the old key.
UPDATE refund SET idempotency_key = gen_random_uuid()::text WHERE state = 'pending' AND idempotency_key = id;

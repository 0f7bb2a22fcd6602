-- Amounts in their currency's minor units (ISO 4217): KWD, BHD, JOD, OMR, TND, LYD and IQD have
-- three decimals, and NUMERIC(12, 2) rounded the third one away on insert, silently. Ten digits
-- before the decimal point as before, three after; every stored amount stays exactly what it was.
-- Which decimals a currency allows is checked by the writers (RefundSeeder, the worker, the
-- gateway: dev.fenced.gateway.MinorUnits), not here: a CHECK cannot know ISO 4217. Safe to run
-- again. PostgreSQL rewrites the table under an exclusive lock to change the scale.
ALTER TABLE refund ALTER COLUMN amount TYPE NUMERIC(13, 3);

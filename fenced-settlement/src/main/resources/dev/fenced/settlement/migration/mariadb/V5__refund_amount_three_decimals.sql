-- Amounts in their currency's minor units (ISO 4217): KWD, BHD, JOD, OMR, TND, LYD and IQD have
-- three decimals, and DECIMAL(12, 2) rounded the third one away on insert, with only a note. Ten
-- digits before the decimal point as before, three after; every stored amount stays exactly what
-- it was. Which decimals a currency allows is checked by the writers (RefundSeeder, the worker,
-- the gateway: dev.fenced.gateway.MinorUnits), not here: a CHECK cannot know ISO 4217. The column's
-- CHECK is restated: MODIFY replaces the whole column definition. Safe to run again.
ALTER TABLE refund MODIFY amount DECIMAL(13, 3) NOT NULL CHECK (amount > 0);

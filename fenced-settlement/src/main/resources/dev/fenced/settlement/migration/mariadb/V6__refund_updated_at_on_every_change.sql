-- updated_at moves with every change of a refund row (claim, confirm, fail, put back, a repair, an
-- operator's UPDATE): ON UPDATE CURRENT_TIMESTAMP(3), as V1 makes it, restated for a table made
-- before V1 by hand or by another tool. Safe to run again.
ALTER TABLE refund MODIFY updated_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3);

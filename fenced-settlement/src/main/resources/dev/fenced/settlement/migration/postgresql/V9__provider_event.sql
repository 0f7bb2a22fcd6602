-- Every provider event a webhook receiver handled, by the provider's event id: a provider delivers
-- an event more than once (a retry after a lost answer, or a plain duplicate), and the id says it
-- was handled already, with what outcome. The row is written in the same transaction as the
-- refund's state, so an event is remembered exactly when its effect is. Rows are not pruned here:
-- a provider stops re-delivering after a few days (Stripe: 3), and an operator may delete older ones.
CREATE TABLE IF NOT EXISTS provider_event (
    event_id    VARCHAR(255) PRIMARY KEY,
    event_type  VARCHAR(64)  NOT NULL,
    refund_id   VARCHAR(64),
    outcome     VARCHAR(16)  NOT NULL,
    received_at TIMESTAMPTZ  NOT NULL DEFAULT now()
);

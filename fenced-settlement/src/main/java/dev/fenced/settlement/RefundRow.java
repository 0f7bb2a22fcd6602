package dev.fenced.settlement;

import java.math.BigDecimal;

/** A refund row as the worker read it: what is sent to the gateway, under which key, and its state then. */
record RefundRow(String id, String merchant, BigDecimal amount, String currency, String idempotencyKey, String state) {
    boolean pending() {
        return state.equals("pending");
    }
}

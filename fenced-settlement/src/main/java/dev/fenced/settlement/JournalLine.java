package dev.fenced.settlement;

import java.math.BigDecimal;

/**
 * One line of the settlement journal: a confirmed refund, with the token that confirmed it (the
 * refund row's fence) and the token of the fenced transaction that wrote the line.
 */
public record JournalLine(long id, String merchant, String refundId, BigDecimal amount, String currency, String gatewayReference,
                          long token, long writtenBy) {
}

/**
 * The payment provider seam: {@code RefundGateway}, what it returns and how it fails, amounts in
 * minor units, and the provider's signed events. The simulated gateway and the Stripe adapter
 * implement it; the settlement worker calls it.
 */
module dev.fenced.provider {
    requires transitive dev.fenced.core;
    requires com.fasterxml.jackson.databind;

    exports dev.fenced.provider;
    // Jackson reads and writes the records of this package (GatewayRefund, in events and in the gateway's answers).
    opens dev.fenced.provider to com.fasterxml.jackson.databind;
}

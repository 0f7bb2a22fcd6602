/** The simulated payment gateway (its HTTP server and ledger) and {@code GatewayClient}. */
module dev.fenced.gateway {
    requires transitive dev.fenced.provider;
    requires com.fasterxml.jackson.databind;
    requires java.net.http;
    requires jdk.httpserver;

    exports dev.fenced.gateway;
    // Jackson reads the gateway's answers into records of this package, some package-private.
    opens dev.fenced.gateway to com.fasterxml.jackson.databind;
}

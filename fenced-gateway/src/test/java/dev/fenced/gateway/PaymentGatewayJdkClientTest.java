package dev.fenced.gateway;

import java.time.Duration;

/**
 * Every test of {@link PaymentGatewayTest} through the JDK's {@code HttpClient}: the client of every
 * https gateway, and of an http one under {@code -Dfenced.gateway.httpClient=jdk}. Both clients must
 * classify every failure alike.
 */
class PaymentGatewayJdkClientTest extends PaymentGatewayTest {
    @Override
    GatewayClient client(String url, Duration timeout) {
        return GatewayClient.of(url, timeout, false);
    }
}

package dev.fenced.cli;

import picocli.CommandLine.Option;

/** {@code --gateway-url}, for the commands that call the payment gateway. */
public final class GatewayOptions {
    @Option(names = "--gateway-url", paramLabel = "URL", defaultValue = "${env:FENCED_GATEWAY_URL}",
            description = "the payment gateway, http://host:port (env FENCED_GATEWAY_URL)")
    public String gatewayUrl;
}

package dev.fenced.cli;

import picocli.CommandLine.Option;

/** {@code --gateway-url}, for the commands that call the payment gateway. */
public final class GatewayOptions {
    @Option(names = "--gateway-url", paramLabel = "URL", defaultValue = "${env:FENCED_GATEWAY_URL}",
            description = "the payment gateway, http://host:port (env FENCED_GATEWAY_URL)")
    public String gatewayUrl;

    /** {@code --gateway-url}, or the usage error of a command that needs it; checked before anything connects. */
    public String requireUrl() {
        return UsageException.requireGiven(gatewayUrl, "--gateway-url", "FENCED_GATEWAY_URL");
    }
}

package dev.fenced.cli;

import com.sun.net.httpserver.HttpServer;
import dev.fenced.FencedObserver;
import dev.fenced.micrometer.FencedMeters;
import dev.fenced.settlement.SettlementListener;
import dev.fenced.settlement.metrics.SettlementMeters;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A long-running command's meters for Prometheus, at {@code http://HOST:PORT/metrics} in the text
 * exposition format: fenced's meters ({@link FencedMeters}, {@link SettlementMeters}) and the JVM's
 * memory and threads. Serves nothing else, and nothing that carries a URL or a secret.
 */
final class MetricsEndpoint implements AutoCloseable {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final FencedMeters fenced = FencedMeters.in(registry);
    private final SettlementMeters settlement = SettlementMeters.in(registry);
    private final HttpServer server;

    private MetricsEndpoint(String host, int port) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        try {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        } catch (BindException e) {
            throw new UsageException("--metrics-port " + port + " on " + host + " is taken or not allowed: " + e.getMessage());
        } catch (IOException e) {
            throw new UsageException("cannot serve metrics on " + host + ":" + port + ": " + e.getMessage());
        }
        server.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    /** Serves on {@code host:port}; port 0 takes a free one ({@link #port()}). */
    static MetricsEndpoint serve(String host, int port) {
        if (port < 0 || port > 65_535) {
            throw new UsageException("--metrics-port must be 0 to 65535, got " + port);
        }
        return new MetricsEndpoint(host, port);
    }

    int port() {
        return server.getAddress().getPort();
    }

    FencedObserver observer() {
        return fenced;
    }

    SettlementListener settlementListener() {
        return settlement;
    }

    SettlementMeters settlementMeters() {
        return settlement;
    }

    @Override
    public void close() {
        server.stop(0);
        registry.close();
    }
}

package dev.fenced.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show a merchant's lease, counter, refunds by state, highest fence and the gateway's view.")
final class StatusCommand implements Callable<Integer> {
    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--json", description = "print one JSON document")
    boolean json;

    @Mixin
    Connections connections;

    @Mixin
    NatsOptions nats;

    @Override
    public Integer call() throws Exception {
        String resource = Merchants.resource(merchant);
        String redisUrl = Connections.require(connections.redisUrl, "--redis-url", "FENCED_REDIS_URL");
        String dbUrl = Connections.require(connections.dbUrl, "--db-url", "FENCED_DB_URL");
        Map<String, Object> status = new LinkedHashMap<>();
        status.put("merchant", merchant);
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2); RedisLeaseStore leases = Connections.leases(redisUrl, db, null)) {
            LeaseSnapshot lease = leases.inspect(resource);
            status.put("leaseHolder", lease.holder());
            status.put("leaseMillisLeft", lease.timeLeft().toMillis());
            status.put("counter", lease.counter());
            RefundSummary refunds = RefundSummary.of(db, merchant);
            status.put("rowsByState", refunds.rowsByState());
            status.put("highestFence", refunds.highestFence());
            status.put("totalAmount", refunds.totalAmount().toPlainString());
        }
        if (connections.gatewayUrl != null && !connections.gatewayUrl.isBlank()) {
            List<GatewayRefund> ledger = Connections.gateway(connections.gatewayUrl).ledger().stream()
                    .filter(r -> r.merchant().equals(merchant)).toList();
            long unique = ledger.stream().map(GatewayRefund::reference).distinct().count();
            status.put("gatewayRefunds", ledger.size());
            status.put("gatewayDuplicates", ledger.size() - unique);
        }
        if (nats.given()) {
            nats.requireUrl();
            try (io.nats.client.Connection broker = nats.connect("fenced-status")) {
                status.put("jobs", dev.fenced.fleet.SettlementJobs.statusOf(broker, nats.streamBuilder().build())
                        .<Object>map(jobs -> jobs).orElse("no stream " + nats.stream));
            }
        }
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(status));
        } else {
            status.forEach((key, value) -> System.out.printf("%-18s %s%n", key, value));
        }
        return 0;
    }
}

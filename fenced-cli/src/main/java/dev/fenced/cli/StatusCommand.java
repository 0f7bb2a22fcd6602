package dev.fenced.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.StoreUnavailableException;
import dev.fenced.fleet.JobQueueStatus;
import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.util.List;
import java.util.Optional;
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
        Connections.require(connections.redisUrl, "--redis-url", "FENCED_REDIS_URL"); // before anything connects
        String dbUrl = Connections.require(connections.dbUrl, "--db-url", "FENCED_DB_URL");
        LeaseSnapshot lease;
        RefundSummary refunds;
        try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2); RedisLeaseStore leases = connections.leases(db, null, FencedObserver.NONE)) {
            lease = leases.inspect(resource);
            refunds = RefundSummary.of(db, merchant);
        }
        Integer gatewayRefunds = null;
        Long gatewayDuplicates = null;
        if (connections.gatewayUrl != null && !connections.gatewayUrl.isBlank()) {
            List<GatewayRefund> ledger = Connections.gateway(connections.gatewayUrl).ledger().stream()
                    .filter(r -> r.merchant().equals(merchant)).toList();
            gatewayRefunds = ledger.size();
            gatewayDuplicates = ledger.size() - ledger.stream().map(GatewayRefund::reference).distinct().count();
        }
        Optional<JobQueueStatus> jobs = Optional.empty();
        String jobsMissing = null;
        if (nats.given()) {
            nats.checkUrl();
            JobStream stream = nats.streamBuilder().build();
            jobsMissing = "no stream " + stream.stream();
            try (io.nats.client.Connection broker = nats.connect("fenced-status")) {
                jobs = SettlementJobs.statusOf(broker, stream);
            } catch (StoreUnavailableException e) {
                jobsMissing = "unavailable: " + e.getMessage(); // a read-only view degrades, it does not fail
            }
        }
        StatusReport report = new StatusReport(merchant, lease.holder(), lease.timeLeft().toMillis(), lease.counter(), refunds.rowsByState(),
                refunds.highestFence(), refunds.totalAmount().toPlainString(), gatewayRefunds, gatewayDuplicates, jobs.orElse(null),
                jobs.isEmpty() ? jobsMissing : null);
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
        } else {
            System.out.print(report.text());
        }
        return 0;
    }
}

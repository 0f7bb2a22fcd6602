package dev.fenced.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedObserver;
import dev.fenced.TokenIssuerMismatchException;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.redis.LeaseSnapshot;
import dev.fenced.redis.RedisLeaseStore;
import dev.fenced.redis.TokenIssuer;
import dev.fenced.redis.TokenPolicy;
import dev.fenced.settlement.Merchants;
import dev.fenced.settlement.RefundSummary;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "tokens", mixinStandardHelpOptions = true,
        description = {"Show who issues a merchant's fencing tokens, or switch it to another issuer.",
                "The issuer is recorded in Redis by the merchant's first lease. A switch is deliberate: only while no worker holds"
                        + " the merchant, with the new issuer's first token above every token issued before (the highest stored"
                        + " fence, Redis's counter, the database sequence). Tokens of different issuers do not order, so every"
                        + " command that takes a lease refuses another issuer than the recorded one (exit 11).",
                "Exit codes: 0 shown or switched, 1 the tokens do not agree with --tokens or the rows (shown), 4 a worker holds"
                        + " the lease (nothing switched), 2 usage error."})
final class TokensCommand implements Callable<Integer> {
    @Option(names = "--merchant", required = true, description = "merchant id, e.g. m_4471")
    String merchant;

    @Option(names = "--switch-to", paramLabel = "redis|epochs|database", converter = Connections.TokensConverter.class,
            description = "hand the merchant's tokens to this issuer; then run every worker with --tokens set to it")
    TokenIssuer switchTo;

    @Mixin
    Connections connections;

    @Mixin
    DatabaseOptions databaseOptions;

    @Override
    public Integer call() {
        Merchants.requireValid(merchant);
        String resource = Merchants.resource(merchant);
        if (connections.backend() != LeaseBackend.REDIS) {
            throw new UsageException("tokens shows and switches the issuers of Redis's tokens; " + connections.backend().label()
                    + " issues its own (see fenced status; fenced migrate --leases " + connections.backend().setting() + " raises them)");
        }
        connections.requireRedisUrl();
        String dbUrl = databaseOptions.requireUrl();
        if (switchTo == null) {
            try (HikariDataSource db = Connections.readOnlyDatabase(dbUrl, 2); RedisLeaseStore leases = connections.leases(db, null, FencedObserver.NONE)) {
                LeaseSnapshot lease = leases.inspect(resource);
                long highestFence = RefundSummary.of(db, merchant).highestFence();
                long inRedis = lease.highestTokenIssued();
                System.out.println(merchant + ": tokens from " + (lease.tokenIssuer() == null ? "no issuer recorded yet"
                        : TokenIssuer.settingOf(lease.tokenIssuer())) + ", highest in Redis " + inRedis + ", highest stored fence "
                        + highestFence);
                String problem = problem(lease, highestFence, connections.tokens);
                if (problem != null) {
                    System.out.println(merchant + ": " + problem);
                    return FencedCli.RUNTIME_FAILURE;
                }
                return 0;
            }
        }
        connections.tokens = switchTo;
        try (HikariDataSource db = Connections.database(dbUrl, 2); RedisLeaseStore leases = connections.leases(db, null, FencedObserver.NONE)) {
            String before = leases.inspect(resource).tokenIssuer();
            long highest = Math.max(RefundSummary.of(db, merchant).highestFence(), leases.inspect(resource).highestTokenIssued());
            if (before == null || TokenIssuer.SOURCE.recorded().equals(before)) {
                // The sequence is shared by every resource: its next value is above every token it gave this one.
                highest = Math.max(highest, JdbcSequenceTokenSource.of(db).nextToken(resource));
            }
            switch (switchTo) {
                case EPOCHS -> JdbcSequenceTokenSource.epochs(db).raiseAbove(TokenPolicy.epochOf(highest));
                case SOURCE -> JdbcSequenceTokenSource.of(db).raiseAbove(highest);
                case REDIS -> { } // the switch sets the counter itself
            }
            if (!leases.switchTokenIssuer(resource, highest)) {
                System.err.println("fenced tokens: a worker holds " + resource + "'s lease; nothing switched: try again when it is done");
                return SettleCommand.LEASE_BUSY;
            }
            System.out.println(merchant + ": tokens now from " + switchTo.setting() + " (before: "
                    + (before == null ? "none recorded" : TokenIssuer.settingOf(before)) + "), every one above " + highest
                    + "; run every worker with --tokens " + switchTo.setting());
            return 0;
        }
    }

    /**
     * What is wrong with a merchant's tokens as this deployment sees them, or null: another issuer
     * recorded than {@code --tokens} names, or Redis's counter below a stored fence (rows fenced by
     * another issuer before issuers were recorded, or tokens Redis lost): its next token would be
     * refused by those rows and could lose to a stale holder on the others.
     */
    static String problem(LeaseSnapshot lease, long highestFence, TokenIssuer configured) {
        long highestInRedis = lease.highestTokenIssued();
        if (lease.tokenIssuer() != null && !lease.tokenIssuer().equals(configured.recorded())) {
            return "tokens come from " + TokenIssuer.settingOf(lease.tokenIssuer()) + " (recorded in Redis), not from "
                    + configured.setting() + " as --tokens says: such a worker is refused; switch with 'fenced tokens --merchant "
                    + Merchants.merchantOf(lease.resource()) + " --switch-to " + configured.setting() + "'";
        }
        boolean redisIssues = lease.tokenIssuer() == null ? configured != TokenIssuer.SOURCE
                : !TokenIssuer.SOURCE.recorded().equals(lease.tokenIssuer());
        if (redisIssues && lease.counter() != null && highestInRedis < highestFence) {
            return "Redis's tokens (highest " + highestInRedis + ") are below the highest stored fence " + highestFence
                    + ": the rows were fenced by another issuer or Redis lost tokens; switch with 'fenced tokens --merchant "
                    + Merchants.merchantOf(lease.resource()) + " --switch-to " + configured.setting() + "'";
        }
        return null;
    }

    /** The refusal in the command line's words: the options, not the library's issuer names. */
    static String describe(TokenIssuerMismatchException mismatch) {
        String resource = mismatch.resource();
        String merchant = resource.startsWith("settle:") ? resource.substring("settle:".length()) : resource;
        String recorded = TokenIssuer.settingOf(mismatch.recordedIssuer());
        return "tokens of " + merchant + " come from " + recorded + " (recorded in Redis), this process was started with --tokens "
                + TokenIssuer.settingOf(mismatch.thisIssuer()) + "; tokens of different issuers do not order, so it took no lease."
                + " Use --tokens " + recorded + ", or switch the merchant with 'fenced tokens --merchant " + merchant + " --switch-to "
                + TokenIssuer.settingOf(mismatch.thisIssuer()) + "'";
    }
}

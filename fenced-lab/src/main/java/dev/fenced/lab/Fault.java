package dev.fenced.lab;

import dev.fenced.cli.UsageException;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A fault the chaos run can inject; {@link #label()} is its spelling on the command line
 * ({@code --faults pause,redis-restart}) and in the report. {@link #NATS_RESTART} restarts the
 * run's own {@code nats-server} on its file storage: it needs a server the run owns.
 */
enum Fault {
    PAUSE, KILL, REDIS_RESTART, FLUSHALL, FAILOVER, LAGGING_FAILOVER, DB_KILL, GATEWAY, GATEWAY_OUTAGE, GATEWAY_RESTART, KEY_REUSE,
    NATS_RESTART;

    /** Faults that strike all along rather than at drawn moments. */
    boolean standing() {
        return this == GATEWAY || this == KEY_REUSE;
    }

    static Set<Fault> parse(List<String> names) {
        Set<Fault> out = EnumSet.noneOf(Fault.class);
        for (String name : names) {
            try {
                out.add(Fault.valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (IllegalArgumentException e) {
                throw new UsageException("unknown fault '" + name + "'; use pause, kill, redis-restart, flushall, failover, lagging-failover,"
                        + " db-kill, gateway, gateway-outage, gateway-restart, key-reuse, nats-restart");
            }
        }
        return out;
    }

    String label() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}

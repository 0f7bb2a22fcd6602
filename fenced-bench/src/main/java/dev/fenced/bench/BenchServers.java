package dev.fenced.bench;

/**
 * Where the benchmarks find their servers: system properties set by {@link BenchMain} for the
 * forked JMH JVMs, which name either the servers in {@code FENCED_REDIS_URL}, {@code FENCED_PG_URL}
 * and {@code FENCED_MARIADB_URL} or embedded ones it started.
 */
final class BenchServers {
    static final String REDIS = "fenced.bench.redis";
    static final String PG = "fenced.bench.pg";
    static final String MARIADB = "fenced.bench.mariadb";

    private BenchServers() {
    }

    static String redis() {
        return required(REDIS);
    }

    static String postgres() {
        return required(PG);
    }

    static String database(String name) {
        return name.equals("postgresql") ? postgres() : required(MARIADB);
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException(property + " is not set: run the benchmarks through BenchMain");
        }
        return value;
    }
}

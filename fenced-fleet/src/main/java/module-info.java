/** Settlement jobs on NATS JetStream: publishing them and {@code FleetWorker}, on jnats's connection. */
module dev.fenced.fleet {
    requires transitive dev.fenced.settlement;
    requires transitive io.nats.jnats;

    exports dev.fenced.fleet;
}

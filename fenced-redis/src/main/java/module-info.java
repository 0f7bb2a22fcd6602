/** {@code RedisLeaseStore}: leases and tokens on Redis through Lettuce, whose client types its builders take. */
module dev.fenced.redis {
    requires transitive dev.fenced.core;
    requires transitive lettuce.core;
    requires org.slf4j;

    exports dev.fenced.redis;
}

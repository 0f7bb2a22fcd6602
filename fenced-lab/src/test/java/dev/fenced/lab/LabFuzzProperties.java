package dev.fenced.lab;

import dev.fenced.cli.CliFuzzProperties;
import java.util.List;
import java.util.Map;

/** The command-line fuzz of {@link CliFuzzProperties}, on the lab's commands. */
class LabFuzzProperties extends CliFuzzProperties {

    @Override
    protected List<Command> commands() {
        return List.of(
                new Command(List.of("demo"), ordered(), Map.of("--speed", List.of("0", "-3", "1000", "x", "NaN")), List.of()),
                new Command(List.of("compare"), ordered(), Map.of("--speed", List.of("0", "x"), "--refunds", List.of("0", "x"),
                        "--runs", List.of("0", "x")), List.of(List.of("--only", "bogus"))),
                new Command(List.of("chaos"), ordered(), Map.of("--merchants", List.of("0", "1001", "x"), "--workers", List.of("0", "100"),
                        "--refunds", List.of("0", "x"), "--concurrency", List.of("65"), "--ttl", List.of("x", "0s"),
                        "--faults", List.of("bogus", "pause,nope")), List.of()),
                new Command(List.of("lab-settle"), ordered("--merchant", MERCHANT, "--db-url", DB, "--redis-url", REDIS,
                        "--gateway-url", "http://127.0.0.1:1"), Map.of("--pause-at", List.of("nowhere", "after-claim", "x:r_1")), List.of()));
    }
}

package dev.fenced.lab;

import dev.fenced.cli.Progress;
import dev.fenced.cli.ProgressOptions;
import dev.fenced.cli.UsageException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "compare", mixinStandardHelpOptions = true,
        description = {"Measure the article's table: the worked example under each mechanism.",
                "Each mechanism runs with real worker processes, a real SIGSTOP placed at the worst moment for each, and a SIGKILL"
                        + " to measure the outage a TTL costs.",
                "Runs on embedded redis-server and PostgreSQL."})
final class CompareCommand implements Callable<Integer> {
    @Option(names = "--runs", defaultValue = "1", description = "runs per mechanism (default ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--speed", defaultValue = "10", description = "divide every time by this (default ${DEFAULT-VALUE})")
    double speed;

    @Option(names = "--refunds", defaultValue = "1200", description = "refunds in the story (default ${DEFAULT-VALUE}); 70.25 EUR each on average")
    int refunds;

    @Option(names = "--only", split = ",", description = "mechanisms to run, of: ttl, renewal, check, fence, fence+idempotency, ttl-5min")
    List<String> only;

    @Option(names = "--json", description = "print one JSON document")
    boolean json;

    @Option(names = "--html", paramLabel = "FILE", description = "also write a self-contained HTML report: the table, one timeline per"
            + " run on a shared axis, the outage after a crash")
    Path html;

    @Mixin
    ProgressOptions progressOptions;

    @Override
    public Integer call() throws IOException {
        Scenario.requireValidSpeed(speed);
        if (runs < 1 || runs > 100) {
            throw new UsageException("--runs must be 1 to 100, got " + runs);
        }
        if (refunds < 10 || refunds > 100_000) {
            throw new UsageException("--refunds must be 10 to 100000, got " + refunds);
        }
        List<Mechanism> mechanisms = selected();
        Scenario.Story story = refunds == 1200 ? Scenario.Story.ARTICLE
                : new Scenario.Story(refunds, new BigDecimal("70.25").multiply(BigDecimal.valueOf(refunds)));
        List<ComparisonRow> rows = new ArrayList<>();
        List<ComparisonRun> allRuns = new ArrayList<>();
        ComparisonReport.Environment environment;
        try (ScenarioServers servers = ScenarioServers.embedded(json ? null : System.err);
             Progress progress = progressOptions.start("compare", (long) mechanisms.size() * (runs + 1), "runs")) {
            environment = ComparisonReport.Environment.of(servers.redisVersion(), servers.databaseVersion());
            for (Mechanism mechanism : mechanisms) {
                List<DemoReport> results = new ArrayList<>();
                for (int run = 1; run <= runs; run++) {
                    if (!json) {
                        System.err.printf("%s: run %d of %d%n", mechanism.label(), run, runs);
                    }
                    DemoReport result = new Scenario(speed, mechanism, story, null).run(servers);
                    results.add(result);
                    allRuns.add(new ComparisonRun(result, run));
                    progress.step();
                }
                if (!json) {
                    System.err.printf("%s: a holder killed with SIGKILL, waiting for its lease to expire (%s article s)%n", mechanism.label(),
                            mechanism.articleTtl().toSeconds());
                }
                double outage = new Scenario(speed, mechanism, story, null).measureCrashOutageArticleSeconds(servers);
                rows.add(ComparisonRow.of(mechanism, results, outage));
                progress.step();
            }
        }
        ComparisonReport report = new ComparisonReport(speed, runs, story.refunds(), story.stalledRefund(), rows, allRuns, environment);
        if (html != null) {
            Files.writeString(html, HtmlReport.render(report), StandardCharsets.UTF_8);
        }
        if (json) {
            System.out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
        } else {
            System.out.print(report.table());
            if (html != null) {
                System.out.println("report written to " + html);
            }
        }
        return 0;
    }

    private List<Mechanism> selected() {
        if (only == null || only.isEmpty()) {
            return Mechanism.ALL;
        }
        List<Mechanism> out = new ArrayList<>();
        for (String key : only) {
            out.add(Mechanism.ALL.stream().filter(m -> m.key().equals(key.trim())).findFirst()
                    .orElseThrow(() -> new UsageException("unknown mechanism '" + key + "'; use "
                            + String.join(", ", Mechanism.ALL.stream().map(Mechanism::key).toList()))));
        }
        return out;
    }
}

package dev.fenced.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmarks without a terminal, as a user runs them (a process of their own, JMH forking its
 * JVMs): a line when each section starts and a progress line at a steady interval on stderr, the
 * last one when they end; the report alone on stdout. One quick section keeps it short.
 */
class BenchProgressTest {
    @TempDir
    Path dir;

    @Test
    void progressLinesOnStderrAndTheReportOnStdout() throws Exception {
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), BenchMain.class.getName(), "--only", "tokens",
                "--quick", "--progress-every", "1000").redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(10, TimeUnit.MINUTES)).as("the quick token section ends").isTrue();
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(stderr).isZero();

        List<String> lines = stderr.strip().lines().toList();
        assertThat(lines.get(0)).isEqualTo("benchmarks: tokens (1 of 1)");
        Pattern periodic = Pattern.compile("benchmarks: ([01])/1 sections \\((\\d+) %\\), \\d+\\.\\d/s(, about \\d+ s left)?");
        List<Long> counts = lines.stream().map(periodic::matcher).filter(Matcher::matches).map(m -> Long.parseLong(m.group(1))).toList();
        assertThat(counts).as(stderr).hasSizeGreaterThanOrEqualTo(3).isSorted();
        assertThat(lines.get(lines.size() - 1)).matches("benchmarks: 1/1 sections in \\d+\\.\\d s");
        assertThat(Files.readString(out, StandardCharsets.UTF_8)).contains("## Token sources").doesNotContain("sections (");
    }
}

package dev.fenced.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** The per-thread CPU readings the fleet table separates the JIT's and the collector's share by, on this JVM's own threads. */
class ProcStatsTest {
    private static final long SELF = ProcessHandle.current().pid();

    @Test
    void aBusyThreadIsFoundByItsNameAndItsTicksGrow() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux's /proc");
        AtomicBoolean spin = new AtomicBoolean(true);
        Thread busy = new Thread(() -> {
            long n = 0;
            while (spin.get()) {
                n++;
            }
            if (n == 42) {
                System.out.print(""); // the loop's result is used
            }
        }, "proc-stats-spinner");
        busy.start();
        try {
            // /proc counts CPU in ticks of 10 ms: a spinning thread shows some within a few hundred milliseconds.
            Awaitility.await("the spinning thread's CPU ticks").atMost(Duration.ofSeconds(10)).until(() -> {
                Map<Long, ProcStats.ThreadCpu> found = ProcStats.threads(SELF, name -> name.equals("proc-stats-spin"));
                return found.size() == 1 && found.values().iterator().next().ticks() > 0;
            });
        } finally {
            spin.set(false);
        }
        assertThat(ProcStats.threads(SELF, name -> name.equals("no-such-thread"))).isEmpty();
        assertThat(ProcStats.threads(-1, name -> true)).as("no such process").isEmpty();
    }

    @Test
    void aThreadPassedOverOnceIsNotReadAgain() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux's /proc");
        Set<Long> passedOver = new HashSet<>();
        Map<Long, ProcStats.ThreadCpu> jit = ProcStats.threads(SELF, name -> "JIT".equals(FleetSampler.jvmThreadKind(name)), passedOver);
        assertThat(jit).as("HotSpot's compiler threads").isNotEmpty();
        assertThat(passedOver).as("this JVM's other threads").isNotEmpty().doesNotContainAnyElementsOf(jit.keySet());

        // Asked now for every thread, it reads only those it did not pass over: the compiler threads (HotSpot keeps the
        // first of each compiler for the JVM's life; it may end the others), and any started since.
        Map<Long, ProcStats.ThreadCpu> again = ProcStats.threads(SELF, name -> true, passedOver);
        assertThat(again.keySet()).as("read again").isNotEmpty().doesNotContainAnyElementsOf(passedOver);
        assertThat(again.values()).extracting(ProcStats.ThreadCpu::name).anyMatch(name -> "JIT".equals(FleetSampler.jvmThreadKind(name)));
    }

    @Test
    void theJitsCompilerThreadsAreToldApartFromTheApplications() {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux's /proc");
        assertThat(ProcStats.threads(SELF, name -> "JIT".equals(FleetSampler.jvmThreadKind(name))))
                .as("HotSpot's C1 and C2 compiler threads").isNotEmpty();
        assertThat(FleetSampler.jvmThreadKind("C2 CompilerThre")).isEqualTo("JIT");
        assertThat(FleetSampler.jvmThreadKind("C1 CompilerThre")).isEqualTo("JIT");
        assertThat(FleetSampler.jvmThreadKind("GC Thread#0")).isEqualTo("GC");
        assertThat(FleetSampler.jvmThreadKind("G1 Conc#0")).isEqualTo("GC");
        assertThat(FleetSampler.jvmThreadKind("settle-m_4471")).isNull();
        assertThat(FleetSampler.jvmThreadKind("main")).isNull();
    }
}

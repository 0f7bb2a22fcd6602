package dev.fenced.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fenced.FencedExecutor;
import dev.fenced.Lease;
import dev.fenced.jdbc.FencedSchema;
import dev.fenced.jdbc.JdbcLeaseStore;
import dev.fenced.jdbc.JdbcSequenceTokenSource;
import dev.fenced.jdbc.StaleTransactionException;
import dev.fenced.testing.servers.TestDatabases;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link FencedLock} on a Spring bean's methods (through its proxy, as in an application), with
 * leases in a real PostgreSQL ({@link JdbcLeaseStore}) and the transactions' guard in the same
 * database. A newer holder is played by entering the guard with a higher token, as a holder that
 * took over would; each refusal has its control with the guard off.
 */
class FencedLockTest {
    private static HikariDataSource db;
    private static JdbcLeaseStore leases;
    private static AnnotationConfigApplicationContext context;

    /** An application's jobs. */
    public static class Jobs {
        private final AtomicInteger runs = new AtomicInteger();
        private final JdbcTemplate jdbc;
        private final TransactionTemplate transactions;

        private final TransactionTemplate requiresNew;
        private final TransactionTemplate readOnly;
        private final Inner inner;

        Jobs(JdbcTemplate jdbc, PlatformTransactionManager transactionManager, Inner inner) {
            this.jdbc = jdbc;
            this.transactions = new TransactionTemplate(transactionManager);
            this.requiresNew = new TransactionTemplate(transactionManager);
            requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
            this.readOnly = new TransactionTemplate(transactionManager);
            readOnly.setReadOnly(true);
            this.inner = inner;
        }

        /** A guarded transaction, and inside it a REQUIRES_NEW one on a second connection (an audit line, say). */
        @Transactional
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Long postWithAnAuditLine(String account) {
            long token = insert(account, "line");
            requiresNew.executeWithoutResult(status -> insert(account, "audit"));
            return token;
        }

        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Integer readInAReadOnlyTransaction(String account) {
            return readOnly.execute(status -> lines(account, "fresh"));
        }

        /** Calls another bean's method on the same resource: it runs under this call's lease. */
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public long[] outerAndInnerTokens(String account) {
            return new long[] {FencedContext.token(), inner.token(account)};
        }

        @FencedLock(resource = "ledger:#{#acount}")
        public Long misspelt(String account) {
            return 0L;
        }

        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Long token(String account) {
            runs.incrementAndGet();
            return FencedContext.token();
        }

        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Optional<Long> maybe(String account) {
            return Optional.of(FencedContext.token());
        }

        /** The transaction begins first (it is declared first, at the same order), then the lease and the guard. */
        @Transactional
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Long post(String account, String note) {
            return insert(account, note);
        }

        @Transactional
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s", guard = false)
        public Long postUnguarded(String account, String note) {
            return insert(account, note);
        }

        /** The lease first, then a transaction begun inside the method. */
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Long postThroughATemplate(String account, String note) {
            return transactions.execute(status -> insert(account, note));
        }

        @FencedLock(resource = "report:#{#p0}", ttl = "10s", minHold = "5s")
        public void report(String name) {
            runs.incrementAndGet();
        }

        @FencedLock(resource = "counted")
        public int primitive() {
            return 1;
        }

        @FencedLock(resource = "held", ttl = "1s", minHold = "2s")
        public void holdAboveTtl() {
        }

        private long insert(String account, String note) {
            long token = FencedContext.token();
            jdbc.update("INSERT INTO fenced_lock_ledger (account, token, note) VALUES (?, ?, ?)", account, token, note);
            return token;
        }

        public int runs() {
            return runs.get();
        }

        public int lines(String account, String note) {
            return jdbc.queryForObject("SELECT COUNT(*) FROM fenced_lock_ledger WHERE account = ? AND note = ?", Integer.class, account, note);
        }
    }

    /** Another bean, on the same resource as its caller. */
    public static class Inner {
        @FencedLock(resource = "ledger:#{#account}", ttl = "10s")
        public Long token(String account) {
            return FencedContext.token();
        }
    }

    @Configuration
    @EnableTransactionManagement
    static class Application {
        @Bean
        PlatformTransactionManager transactionManager() {
            JdbcTransactionManager manager = new JdbcTransactionManager(db);
            manager.addListener(new FencedLockTransactions());
            return manager;
        }

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static FencedLockAdvisor fencedLockAdvisor() {
            FencedExecutor executor = FencedExecutor.builder(leases).build();
            SpringFencedTransactions guard = SpringFencedTransactions.of(db);
            return new FencedLockAdvisor(new FencedLockInterceptor(() -> executor, () -> guard, null));
        }

        @Bean
        Inner inner() {
            return new Inner();
        }

        @Bean
        Jobs jobs(PlatformTransactionManager transactionManager, Inner inner) {
            return new Jobs(new JdbcTemplate(db), transactionManager, inner);
        }
    }

    @BeforeAll
    static void start() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabases.postgresUrl());
        config.setMaximumPoolSize(6);
        db = new HikariDataSource(config);
        FencedSchema.migrate(db);
        new JdbcTemplate(db).execute("CREATE TABLE IF NOT EXISTS fenced_lock_ledger (id BIGSERIAL PRIMARY KEY, account VARCHAR(100) NOT NULL,"
                + " token BIGINT NOT NULL, note VARCHAR(40) NOT NULL)");
        leases = JdbcLeaseStore.builder(db).build();
        context = new AnnotationConfigApplicationContext(Application.class);
    }

    @AfterAll
    static void stop() {
        if (context != null) {
            context.close();
        }
        if (db != null) {
            db.close();
        }
    }

    private static Jobs jobs() {
        return context.getBean(Jobs.class);
    }

    private static String account() {
        return "acct_" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * A newer holder of the account's lease enters the guard, as one that took over would: with a
     * token a million above the sequence, so above every token this test's later calls draw (and
     * far from the top of a long, since other tests read the guard table as a fence floor).
     */
    private static void newerHolderEnters(String account) {
        long newer = JdbcSequenceTokenSource.of(db).nextToken("ledger:" + account) + 1_000_000;
        new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(
                status -> SpringFencedTransactions.of(db).enter("ledger:" + account, newer));
    }

    @Test
    void theMethodRunsUnderALeaseOnTheResourceItsArgumentsNameAndSkipsWhileAnotherHoldsIt() {
        String account = account();
        long first = jobs().token(account);
        long second = jobs().token(account);
        assertThat(second).as("released after each call; a new lease, a greater token").isGreaterThan(first);
        assertThat(leases.view("ledger:" + account).highestTokenIssued()).as("the resource from #account").isEqualTo(second);
        assertThat(FencedContext.current()).as("nothing left on the caller's thread").isEmpty();

        int runs = jobs().runs();
        Lease elsewhere = leases.tryAcquire("ledger:" + account, Duration.ofSeconds(10)).orElseThrow();
        try {
            assertThat(jobs().token(account)).as("skipped while another holds the lease").isNull();
            assertThat(jobs().maybe(account)).isEmpty();
            assertThat(jobs().runs()).as("the method did not run").isEqualTo(runs);
        } finally {
            elsewhere.release();
        }
        assertThat(jobs().maybe(account)).isPresent();
    }

    @Test
    void aTransactionAroundTheLeaseEntersTheGuardAndAStaleOneCommitsNothing() {
        String account = account();
        long token = jobs().post(account, "fresh");
        assertThat(jobs().lines(account, "fresh")).isEqualTo(1);
        assertThat(token).isPositive();

        newerHolderEnters(account);
        assertThatThrownBy(() -> jobs().post(account, "stale")).isInstanceOf(StaleTransactionException.class);
        assertThat(jobs().lines(account, "stale")).as("refused before the body ran").isZero();

        jobs().postUnguarded(account, "stale-control");
        assertThat(jobs().lines(account, "stale-control")).as("control: without the guard the stale token commits").isEqualTo(1);
    }

    @Test
    void aTransactionBegunInsideTheMethodEntersTheGuardWhenItBegins() {
        String account = account();
        assertThat(jobs().postThroughATemplate(account, "fresh")).isPositive();
        assertThat(jobs().lines(account, "fresh")).isEqualTo(1);

        newerHolderEnters(account);
        assertThatThrownBy(() -> jobs().postThroughATemplate(account, "stale")).isInstanceOf(StaleTransactionException.class);
        assertThat(jobs().lines(account, "stale")).as("rolled back: refused when it began").isZero();
    }

    /**
     * A REQUIRES_NEW transaction inside a guarded one does not enter again: the outer one holds the
     * guard's row lock with this token (no newer holder can enter), and a second entry from another
     * connection would wait for that lock on this very thread. The bound fails the test instead of hanging.
     */
    @Test
    @Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a wait on the guard's own row lock would never end
    void aRequiresNewTransactionInsideAGuardedOneDoesNotWaitForItsOwnGuard() {
        String account = account();
        assertThat(jobs().postWithAnAuditLine(account)).isPositive();
        assertThat(jobs().lines(account, "line")).isEqualTo(1);
        assertThat(jobs().lines(account, "audit")).isEqualTo(1);
    }

    @Test
    void aReadOnlyTransactionInsideIsLeftAloneAndANestedCallOnTheSameResourceRunsUnderTheLease() {
        String account = account();
        jobs().post(account, "fresh");
        assertThat(jobs().readInAReadOnlyTransaction(account)).as("read, not refused for a guard it cannot write").isEqualTo(1);
        long[] tokens = jobs().outerAndInnerTokens(account);
        assertThat(tokens[1]).as("the inner call ran (not skipped as busy) under the outer call's lease").isEqualTo(tokens[0]);
    }

    /** ShedLock's lockAtLeastFor: a short run keeps its lease, so the same job called again at once is skipped. */
    @Test
    void aMinimumHoldSkipsTheSameJobCalledAgainAtOnce() {
        String name = "daily-" + UUID.randomUUID();
        int runs = jobs().runs();
        jobs().report(name);
        jobs().report(name);
        assertThat(jobs().runs()).as("the second call skipped").isEqualTo(runs + 1);
        assertThat(leases.view("report:" + name).timeLeft()).as("kept for the hold, not the TTL")
                .isLessThanOrEqualTo(Duration.ofSeconds(5)).isPositive();
    }

    @Test
    void whatCannotWorkIsRefusedWithTheMethodNamed() {
        assertThatThrownBy(() -> jobs().misspelt("acct_1")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("#acount").hasMessageContaining("[#account]");
        assertThatThrownBy(() -> jobs().primitive()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Jobs.primitive").hasMessageContaining("returns int");
        assertThatThrownBy(() -> jobs().holdAboveTtl()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Jobs.holdAboveTtl").hasMessageContaining("minimum hold");
        assertThatThrownBy(() -> FencedLockInterceptor.duration("ttl", "soon")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("30s, 500ms or PT2M");
        assertThat(FencedLockInterceptor.duration("ttl", "PT2M")).isEqualTo(Duration.ofMinutes(2));
        assertThat(FencedLockInterceptor.duration("ttl", "500ms")).isEqualTo(Duration.ofMillis(500));
    }
}

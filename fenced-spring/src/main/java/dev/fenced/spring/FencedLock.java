package dev.fenced.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method of a Spring bean under a lease, as ShedLock's {@code @SchedulerLock}
 * does, and makes the lease's token the fence of the Spring transactions it runs in: the lease is
 * taken or the call skipped, renewed while the method runs, and released after (or kept until
 * {@link #minHold()}). Inside, {@link FencedContext#token()} is the token; a Spring transaction
 * active when the lease is taken, or begun inside the method, enters its guard with it, so a holder
 * paused past its TTL cannot commit once a newer one has entered.
 *
 * <p>How a call ends: the method's result when it ran; {@code null} ({@code Optional.empty()} for
 * an {@code Optional}) when another holder's lease is live, the method not run; the method's own
 * exception when it threw; the refusal ({@code StaleTransactionException}, a {@code FenceViolation})
 * when the database refused its token. Each outcome is reported to the executor's observers (the
 * {@code fenced.executor.runs} meter). A method returning a primitive is refused at its first call:
 * a skipped call has no value for it.
 *
 * <p>Does not stop a method whose lease was lost while it ran, nor protect what it does outside
 * the fenced transactions (an HTTP call): carry the token there yourself, as an idempotency key.
 * Works on calls through the bean's proxy, not on calls from the bean to itself.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencedLock {

    /**
     * The resource to lease: a plain name, or a template with SpEL over the method's arguments in
     * {@code #{...}} ({@code "ledger:#{#account}"}, {@code "job:#{#p0}"}); {@code ${...}} placeholders
     * are resolved first.
     */
    String resource();

    /** The lease's TTL ({@code "30s"}, {@code "500ms"}, {@code "PT2M"}, or a {@code ${...}} placeholder); empty for the executor's. */
    String ttl() default "";

    /**
     * Keep the lease at least this long from its grant, however soon the method returns, so a short
     * job does not run again at once on another node (ShedLock's {@code lockAtLeastFor}); at most the TTL.
     * Empty for the executor's (none unless configured).
     */
    String minHold() default "";

    /** Whether Spring transactions on the fenced DataSource enter the guard with the lease's token; true unless set. */
    boolean guard() default true;
}

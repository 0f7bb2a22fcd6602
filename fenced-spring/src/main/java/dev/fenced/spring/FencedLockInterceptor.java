package dev.fenced.spring;

import dev.fenced.FencedExecutor;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.StringValueResolver;

/**
 * Runs {@link FencedLock} methods through a {@link FencedExecutor}: the resource evaluated per call,
 * the TTL and minimum hold per method, the lease in {@link FencedContext} while the method runs,
 * and the guard of a Spring transaction already active entered before it. Thread-safe; a method's
 * settings are read once.
 */
public final class FencedLockInterceptor implements MethodInterceptor {
    private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");
    /** A variable of the template that names an argument, not a position (#p0, #a0) nor #root or #this. */
    private static final Pattern ARGUMENT_BY_NAME = Pattern.compile("#(?!(?:p|a)\\d+\\b|root\\b|this\\b)[A-Za-z_]\\w*");

    private final Supplier<FencedExecutor> executor;
    private final Supplier<SpringFencedTransactions> guard;
    private final StringValueResolver placeholders;
    private final Map<MethodClassKey, Settings> settings = new ConcurrentHashMap<>();
    private final SpelExpressionParser parser = new SpelExpressionParser();
    private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

    /**
     * @param executor     the executor the leases are taken through, looked up at the first call (so that
     *                     an advisor made early by Spring does not make the store early)
     * @param guard        the guard of the application's transactions, or a supplier of null for none
     * @param placeholders resolves {@code ${...}} in the annotation's values, and nothing else (not an
     *                     {@code EmbeddedValueResolver}, which would evaluate the resource's {@code #{...}}
     *                     once, without the arguments); null for none
     */
    public FencedLockInterceptor(Supplier<FencedExecutor> executor, Supplier<SpringFencedTransactions> guard,
                                 StringValueResolver placeholders) {
        this.executor = executor;
        this.guard = guard;
        this.placeholders = placeholders;
    }

    private record Settings(Expression resource, FencedExecutor executor, boolean guarded, boolean returnsOptional) {
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Class<?> targetClass = invocation.getThis() == null ? method.getDeclaringClass() : AopUtils.getTargetClass(invocation.getThis());
        Settings run = settings.computeIfAbsent(new MethodClassKey(method, targetClass), key -> settingsOf(method, targetClass));
        String resource = resourceOf(run, invocation, targetClass);
        if (FencedContext.holds(resource)) {
            return invocation.proceed(); // called again under the lease this thread holds: run under it, as ShedLock does
        }
        SpringFencedTransactions transactions = run.guarded ? guard.get() : null;
        FencedExecutor.Outcome<Object> outcome = run.executor.execute(resource, lease -> {
            FencedContext.Frame frame = FencedContext.push(lease, transactions);
            try {
                if (frame.mustEnter(TransactionSynchronizationManager.isCurrentTransactionReadOnly())) {
                    frame.enter();
                }
                Object result;
                try {
                    result = proceed(invocation);
                } catch (Exception | Error thrown) {
                    RuntimeException refused = frame.refusalAtBegin(thrown);
                    if (refused != null) {
                        throw refused; // the refusal is why the call failed; what the method threw after it rides along
                    }
                    throw thrown;
                }
                RuntimeException refused = frame.refusalAtBegin(null);
                if (refused != null) {
                    throw refused;
                }
                return result;
            } finally {
                FencedContext.pop(frame);
            }
        });
        return switch (outcome.status()) {
            case EXECUTED -> outcome.result();
            case BUSY -> run.returnsOptional ? Optional.empty() : null;
            case FENCED_OUT, FAILED -> throw unwrapped(outcome.failure());
        };
    }

    private static Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable other) {
            throw new UndeclaredThrowableException(other);
        }
    }

    /** What the method threw, as it threw it: the wrapper {@link #proceed} put around a bare Throwable comes off. */
    private static Throwable unwrapped(Throwable failure) {
        return failure instanceof UndeclaredThrowableException undeclared && undeclared.getCause() != null ? undeclared.getCause() : failure;
    }

    private Settings settingsOf(Method method, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
        FencedLock lock = AnnotatedElementUtils.findMergedAnnotation(specific, FencedLock.class);
        if (lock == null) {
            lock = AnnotatedElementUtils.findMergedAnnotation(method, FencedLock.class);
        }
        if (lock == null) {
            throw new IllegalStateException("no @FencedLock on " + method);
        }
        String where = "@FencedLock on " + targetClass.getSimpleName() + "." + method.getName();
        if (method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
            throw new IllegalStateException(where + " returns " + method.getReturnType() + ": a call skipped while another holder"
                    + " has the lease has no value for it; return void, an object or an Optional");
        }
        FencedExecutor base = executor.get();
        if (base == null) {
            throw new IllegalStateException(where + " needs a FencedExecutor bean (a lease store: Spring Data Redis, fenced.redis.url"
                    + " or fenced.leases=database)");
        }
        String ttlSetting = resolve(lock.ttl());
        String holdSetting = resolve(lock.minHold());
        Duration ttl = ttlSetting.isBlank() ? base.ttl() : duration(where + ", ttl", ttlSetting);
        Duration minHold = holdSetting.isBlank() ? base.minHold() : duration(where + ", minHold", holdSetting);
        FencedExecutor executor;
        try {
            executor = base.with(ttl, minHold);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
        String template = resolve(lock.resource());
        requireKnownArguments(where, template, specific);
        Expression resource = parser.parseExpression(template, new TemplateParserContext());
        return new Settings(resource, executor, lock.guard(), method.getReturnType() == Optional.class);
    }

    /**
     * Every argument the template names must be one of the method's: an unknown or misspelt name is
     * null to SpEL, the template drops it, and every call would share one lease ("ledger:").
     */
    private void requireKnownArguments(String where, String template, Method method) {
        String[] names = parameterNames.getParameterNames(method);
        List<String> known = names == null ? List.of() : List.of(names);
        Matcher named = ARGUMENT_BY_NAME.matcher(template);
        while (named.find()) {
            String name = named.group().substring(1);
            if (names == null) {
                throw new IllegalStateException(where + " names the argument #" + name + ", but " + method.getDeclaringClass().getName()
                        + " was compiled without parameter names: compile with -parameters (Spring Boot's parent does) or write #p0, #p1, ...");
            }
            if (!known.contains(name)) {
                throw new IllegalStateException(where + " names the argument #" + name + ", which the method does not have; it has "
                        + known.stream().map(n -> "#" + n).toList());
            }
        }
    }

    private String resourceOf(Settings run, MethodInvocation invocation, Class<?> targetClass) {
        Method specific = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
        MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(invocation.getThis(), specific,
                invocation.getArguments(), parameterNames);
        Object value = run.resource.getValue(context);
        if (value == null) {
            throw new IllegalArgumentException("@FencedLock resource of " + invocation.getMethod().getName() + " evaluated to null");
        }
        return value.toString();
    }

    private String resolve(String value) {
        return placeholders == null ? value : placeholders.resolveStringValue(value);
    }

    /** {@code 30s}, {@code 500ms}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601 ({@code PT30S}). */
    static Duration duration(String what, String text) {
        String value = text.strip();
        Matcher simple = SIMPLE_DURATION.matcher(value);
        if (simple.matches()) {
            long amount = Long.parseLong(simple.group(1));
            return switch (simple.group(2)) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        }
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(what + " must be a duration such as 30s, 500ms or PT2M, got '" + text + "'", e);
        }
    }
}

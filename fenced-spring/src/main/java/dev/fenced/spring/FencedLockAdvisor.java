package dev.fenced.spring;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.Ordered;

/**
 * Applies {@link FencedLockInterceptor} to every {@link FencedLock} method of the application's
 * beans, the annotation on the class's method or on an interface's. Declare it as an infrastructure
 * bean ({@code @Role(BeanDefinition.ROLE_INFRASTRUCTURE)}), as Spring's transaction advisor is, so
 * the auto-proxy creator of {@code @EnableTransactionManagement} or Spring Boot applies it.
 *
 * <p>Its order is the transaction advisor's ({@link Ordered#LOWEST_PRECEDENCE}) and it is declared
 * after it (the starter is ordered after Boot's transaction auto-configuration), so on a method that
 * is also {@code @Transactional} the transaction begins first, then the lease is taken and the guard
 * entered, and a refusal comes before the method's body runs. Declared before the transaction
 * advisor, the lease is taken first and the guard entered as the transaction begins: a refusal then
 * rolls the transaction back and ends the call after the body ran.
 */
public final class FencedLockAdvisor extends AbstractPointcutAdvisor {
    private final transient FencedLockInterceptor interceptor;
    private final transient Pointcut pointcut = new AnnotationMatchingPointcut(null, FencedLock.class, true);

    public FencedLockAdvisor(FencedLockInterceptor interceptor) {
        this.interceptor = interceptor;
        setOrder(Ordered.LOWEST_PRECEDENCE);
    }

    @Override
    public Pointcut getPointcut() {
        return pointcut;
    }

    @Override
    public Advice getAdvice() {
        return interceptor;
    }
}

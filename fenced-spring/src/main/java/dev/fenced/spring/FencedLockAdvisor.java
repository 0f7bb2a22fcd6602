package dev.fenced.spring;

import org.aopalliance.aop.Advice;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.Ordered;

/**
 * Applies {@link FencedLockInterceptor} to every {@link FencedLock} method of the application's
 * beans. Declare it as an infrastructure bean ({@code @Role(BeanDefinition.ROLE_INFRASTRUCTURE)}),
 * as Spring's transaction advisor is, so the auto-proxy creator of {@code @EnableTransactionManagement}
 * or Spring Boot applies it. Its order is the transaction advisor's by default: on a method that is
 * also {@code @Transactional}, declared after it, the transaction begins first and the lease and
 * the guard are taken inside it, before the method body runs.
 */
public final class FencedLockAdvisor extends AbstractPointcutAdvisor {
    private final transient FencedLockInterceptor interceptor;
    private final transient Pointcut pointcut = AnnotationMatchingPointcut.forMethodAnnotation(FencedLock.class);

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

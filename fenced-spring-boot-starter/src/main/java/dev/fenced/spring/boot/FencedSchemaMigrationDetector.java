package dev.fenced.spring.boot;

import java.util.Set;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;

/**
 * Tells Boot's database-initialization ordering that {@link FencedSchemaMigration} initializes the
 * database: beans that depend on initialization ({@code @DependsOnDatabaseInitialization},
 * {@code JdbcOperations}, an {@code EntityManagerFactory}) are created after it.
 */
public final class FencedSchemaMigrationDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {
    @Override
    protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
        return Set.of(FencedSchemaMigration.class);
    }
}

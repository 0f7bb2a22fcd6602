package dev.fenced.spring.boot;

/**
 * The library's tables at start-up ({@code fenced.schema.migrate}): created or upgraded, or left as
 * they are. A database initializer in Boot's sense, so that {@code @DependsOnDatabaseInitialization}
 * beans, {@code JdbcTemplate}s and JPA wait for it; depend on it to run after.
 */
public final class FencedSchemaMigration {
    private final boolean migrated;

    FencedSchemaMigration(boolean migrated) {
        this.migrated = migrated;
    }

    /** Whether the tables were created or upgraded at this start. */
    public boolean migrated() {
        return migrated;
    }
}

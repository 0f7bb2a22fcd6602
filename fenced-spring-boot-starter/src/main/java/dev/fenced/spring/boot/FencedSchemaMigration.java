package dev.fenced.spring.boot;

/** Marks that the library's tables were migrated at start-up ({@code fenced.schema.migrate}); depend on it to run after. */
public final class FencedSchemaMigration {
    FencedSchemaMigration() {
    }
}

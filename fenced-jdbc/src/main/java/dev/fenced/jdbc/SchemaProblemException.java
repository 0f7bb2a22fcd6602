package dev.fenced.jdbc;

import dev.fenced.FencedException;
import java.util.List;
import java.util.stream.Collectors;

/** The schema is not fit for fencing: every problem {@link SchemaCheck} found, each one line. Fix the schema; retrying cannot help. */
public final class SchemaProblemException extends FencedException {
    private final List<SchemaCheck.Problem> problems;

    public SchemaProblemException(List<SchemaCheck.Problem> problems) {
        super("the schema is not fit for fencing: " + problems.stream().map(SchemaCheck.Problem::toString).collect(Collectors.joining("; ")));
        this.problems = List.copyOf(problems);
    }

    public List<SchemaCheck.Problem> problems() {
        return problems;
    }
}

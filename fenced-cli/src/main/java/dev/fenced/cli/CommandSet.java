package dev.fenced.cli;

import java.util.List;

/**
 * Commands another module adds to the {@code fenced} command line, found with
 * {@link java.util.ServiceLoader} (a {@code META-INF/services/dev.fenced.cli.CommandSet} entry).
 * The lab adds {@code demo}, {@code compare} and {@code chaos} this way, so the operator's jar
 * carries none of them.
 */
public interface CommandSet {
    /** picocli command objects, each annotated with its {@code @Command} name. */
    List<Object> commands();
}

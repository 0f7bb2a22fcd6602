package dev.fenced.jdbc;

import dev.fenced.FencedException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The rows a batch write refused, each with why: a {@link dev.fenced.FenceViolation} carrying
 * what the row holds now, or a {@link RowNotFoundException}.
 */
public interface BatchRefusals {

    /** The refused ids with the reason for each, in the order they were given. */
    Map<Object, FencedException> refusals();

    /** The refused ids. */
    default List<Object> refused() {
        return List.copyOf(refusals().keySet());
    }

    /** Why {@code id} was refused, if it was. */
    default Optional<FencedException> refusal(Object id) {
        return Optional.ofNullable(refusals().get(id));
    }
}

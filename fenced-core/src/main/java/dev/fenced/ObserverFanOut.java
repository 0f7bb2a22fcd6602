package dev.fenced;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** Several observers as one; see {@link FencedObserver#all}. */
final class ObserverFanOut implements FencedObserver {
    private final List<FencedObserver> observers;

    ObserverFanOut(List<FencedObserver> observers) {
        this.observers = List.copyOf(observers);
    }

    private void each(Consumer<FencedObserver> call) {
        for (FencedObserver observer : observers) {
            try {
                call.accept(observer);
            } catch (RuntimeException ignored) {
                // An observer's failure must not change what the library decided, nor silence the others.
            }
        }
    }

    @Override
    public Scope starting(Step step, String resource) {
        List<Scope> scopes = new ArrayList<>(observers.size());
        each(o -> scopes.add(o.starting(step, resource)));
        return new Scope() {
            @Override
            public void outcome(String outcome) {
                for (Scope scope : scopes) {
                    quietly(() -> scope.outcome(outcome));
                }
            }

            @Override
            public void error(Throwable failure) {
                for (Scope scope : scopes) {
                    quietly(() -> scope.error(failure));
                }
            }

            @Override
            public void close() {
                // Innermost first, as they were opened.
                for (int i = scopes.size() - 1; i >= 0; i--) {
                    Scope scope = scopes.get(i);
                    quietly(scope::close);
                }
            }
        };
    }

    private static void quietly(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException ignored) {
            // As in each(): an observer's failure changes nothing the library decided.
        }
    }

    @Override
    public void executed(String resource, FencedExecutor.Status status, Duration took) {
        each(o -> o.executed(resource, status, took));
    }

    @Override
    public void acquired(String resource, AcquireOutcome outcome, long token, Duration took) {
        each(o -> o.acquired(resource, outcome, token, took));
    }

    @Override
    public void renewed(String resource, long token, RenewalOutcome outcome) {
        each(o -> o.renewed(resource, token, outcome));
    }

    @Override
    public void counterReseeded(String resource, long floor, long reseededTo) {
        each(o -> o.counterReseeded(resource, floor, reseededTo));
    }

    @Override
    public void counterRaised(String resource, long storedFence) {
        each(o -> o.counterRaised(resource, storedFence));
    }

    @Override
    public void fenceViolation(String operation, FenceViolation violation) {
        each(o -> o.fenceViolation(operation, violation));
    }
}

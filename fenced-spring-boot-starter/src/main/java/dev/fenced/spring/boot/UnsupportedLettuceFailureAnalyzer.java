package dev.fenced.spring.boot;

import dev.fenced.redis.LettuceVersion;
import dev.fenced.redis.UnsupportedLettuceVersionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start-up stopped by a Lettuce outside fenced-redis's range into Boot's failure report:
 * what was found, the range, and how to pick a version in a Boot build.
 */
public final class UnsupportedLettuceFailureAnalyzer extends AbstractFailureAnalyzer<UnsupportedLettuceVersionException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnsupportedLettuceVersionException cause) {
        return new FailureAnalysis(
                "fenced's Redis lease store cannot run on the Lettuce this application has: " + cause.found()
                        + " (fenced-redis supports " + LettuceVersion.SUPPORTED + ").",
                "Choose a Lettuce in that range: on Spring Boot's parent, set the property lettuce.version (for example"
                        + " <lettuce.version>6.8.2.RELEASE</lettuce.version>); with Boot's BOM imported, declare io.lettuce:lettuce-core"
                        + " with that version in dependencyManagement before the BOM. Or take leases from the database"
                        + " (fenced.leases=database), which needs no Redis.",
                cause);
    }
}

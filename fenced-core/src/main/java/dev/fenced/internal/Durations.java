package dev.fenced.internal;

import java.math.BigDecimal;
import java.time.Duration;

/** Durations in messages as people write them ({@code 0s}, {@code 250ms}, {@code 1.5s}, {@code 2m}, {@code 1h30m}), never {@code PT0S}. */
public final class Durations {
    private Durations() {
    }

    /**
     * {@code duration} in hours, minutes and seconds, each left out when zero, the seconds with
     * their fraction; under a second in milliseconds. {@code 0s} for zero, a leading {@code -} when negative.
     */
    public static String human(Duration duration) {
        if (duration.isZero()) {
            return "0s";
        }
        if (duration.isNegative()) {
            return "-" + human(duration.negated());
        }
        long seconds = duration.getSeconds();
        if (seconds == 0) {
            return plain(BigDecimal.valueOf(duration.getNano(), 6)) + "ms";
        }
        StringBuilder out = new StringBuilder();
        if (seconds >= 3600) {
            out.append(seconds / 3600).append('h');
        }
        if (seconds % 3600 >= 60) {
            out.append(seconds % 3600 / 60).append('m');
        }
        if (seconds % 60 != 0 || duration.getNano() != 0) {
            out.append(plain(BigDecimal.valueOf(seconds % 60).add(BigDecimal.valueOf(duration.getNano(), 9)))).append('s');
        }
        return out.toString();
    }

    private static String plain(BigDecimal number) {
        return number.stripTrailingZeros().toPlainString();
    }
}

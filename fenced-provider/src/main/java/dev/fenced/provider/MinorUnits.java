package dev.fenced.provider;

import java.math.BigDecimal;
import java.util.Currency;
import java.util.Optional;

/**
 * Amounts in their currency's minor units, as ISO 4217 defines them (through
 * {@link Currency#getDefaultFractionDigits()}): JPY has none, EUR two, KWD three. An amount with
 * more decimals than its currency has is refused, never rounded. Refused too: a code ISO 4217 does
 * not know, a currency without minor units defined (XAU, XXX), and one with more than
 * {@value #MAX_DIGITS} (CLF has four): the refund table keeps three decimals. Stateless.
 */
public final class MinorUnits {
    /** The most decimals an amount can have: the refund table's amount is NUMERIC(13, 3). */
    public static final int MAX_DIGITS = 3;
    /** The most digits before the decimal point: 9,999,999,999 in any currency. */
    public static final int MAX_INTEGER_DIGITS = 10;

    private MinorUnits() {
    }

    /**
     * The number of decimals amounts in {@code currency} have.
     *
     * @throws IllegalArgumentException for a code that is not an ISO 4217 currency, a currency
     *     without minor units, or one with more than {@value #MAX_DIGITS}
     */
    public static int digits(String currency) {
        Currency known;
        try {
            known = Currency.getInstance(currency == null ? "" : currency);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("currency " + currency + " is not an ISO 4217 currency code");
        }
        int digits = known.getDefaultFractionDigits();
        if (digits < 0) {
            throw new IllegalArgumentException("currency " + currency + " has no minor units defined in ISO 4217; refunds cannot be made in it");
        }
        if (digits > MAX_DIGITS) {
            throw new IllegalArgumentException("currency " + currency + " has " + digits + " decimals; refunds keep at most " + MAX_DIGITS);
        }
        return digits;
    }

    /**
     * Why {@code amount} is not a refund amount in {@code currency} (not positive, too large, more
     * decimals than the currency has, or the currency itself), or empty when it is. Cheap for any
     * input: it looks at precision and scale before any arithmetic.
     */
    public static Optional<String> problem(BigDecimal amount, String currency) {
        int digits;
        try {
            digits = digits(currency);
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage());
        }
        if (amount == null) {
            return Optional.of("the amount is missing");
        }
        if (amount.signum() <= 0) {
            return Optional.of("amount " + show(amount) + " " + currency + " is not positive");
        }
        if (amount.precision() - amount.scale() > MAX_INTEGER_DIGITS) {
            return Optional.of("amount " + show(amount) + " " + currency + " has more than " + MAX_INTEGER_DIGITS
                    + " digits before the decimal point");
        }
        if (amount.stripTrailingZeros().scale() > digits) {
            return Optional.of("amount " + show(amount) + " " + currency + " has more decimals than " + currency + " has ("
                    + digits + "); it is refused, not rounded");
        }
        return Optional.empty();
    }

    /**
     * {@code amount} written with exactly its currency's decimals ({@code 150} JPY, {@code 70.25} EUR,
     * {@code 1.234} KWD); never rounded.
     *
     * @throws IllegalArgumentException with {@link #problem}'s reason when the amount does not fit
     */
    public static BigDecimal exact(BigDecimal amount, String currency) {
        Optional<String> problem = problem(amount, currency);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        return amount.setScale(digits(currency)); // exact: the check above leaves nothing to round
    }

    /**
     * {@code amount} in ISO 4217 minor units: 7025 for 70.25 EUR, 150 for 150 JPY. Not always
     * Stripe's: {@link StripeMinorUnits}.
     *
     * @throws IllegalArgumentException with {@link #problem}'s reason when the amount does not fit
     */
    public static long toMinor(BigDecimal amount, String currency) {
        return exact(amount, currency).movePointRight(digits(currency)).longValueExact();
    }

    /** {@code minor} units of {@code currency} as an amount with the currency's decimals: 7025 EUR is 70.25. */
    public static BigDecimal fromMinor(long minor, String currency) {
        return BigDecimal.valueOf(minor, digits(currency));
    }

    /** The amount as written, unless writing it out would take thousands of digits. */
    private static String show(BigDecimal amount) {
        int integerDigits = amount.precision() - amount.scale();
        return Math.abs(amount.scale()) <= 40 && integerDigits <= 40 ? amount.toPlainString() : amount.toString();
    }
}

package dev.fenced.provider;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Set;

/**
 * Amounts as Stripe counts them, which is not always ISO 4217's minor units: Stripe's
 * zero-decimal currencies (JPY, KRW, MGA, ...) are sent as they are; ISK, which ISO gives no
 * decimals, is sent times 100; the three-decimal currencies (KWD, BHD, JOD, OMR, TND) are sent
 * times 1000 and must end in 0 there. Every other currency is sent times 100. An amount that does
 * not fit is refused before anything is sent, never rounded.
 */
public final class StripeMinorUnits {
    /** Stripe's list of zero-decimal currencies. */
    private static final Set<String> ZERO_DECIMAL = Set.of("BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX",
            "VND", "VUV", "XAF", "XOF", "XPF");
    private static final Set<String> THREE_DECIMAL = Set.of("BHD", "JOD", "KWD", "OMR", "TND");

    private StripeMinorUnits() {
    }

    /** How many places Stripe moves the decimal point for {@code currency}. */
    public static int exponent(String currency) {
        String code = currency.toUpperCase(Locale.ROOT);
        return ZERO_DECIMAL.contains(code) ? 0 : THREE_DECIMAL.contains(code) ? 3 : 2;
    }

    /**
     * {@code amount} of {@code currency} in Stripe's units: 7025 for 70.25 EUR, 150 for 150 JPY or MGA,
     * 100000 for 1000 ISK, 1230 for 1.230 KWD.
     *
     * @throws IllegalArgumentException for an amount that is not a refund amount in the currency
     *     ({@link MinorUnits#problem}), or a three-decimal amount not ending in 0
     */
    public static long toStripe(BigDecimal amount, String currency) {
        String code = currency.toUpperCase(Locale.ROOT);
        BigDecimal exact = MinorUnits.exact(amount, code);
        int exponent = exponent(code);
        if (exact.stripTrailingZeros().scale() > exponent) {
            throw new IllegalArgumentException("amount " + exact.toPlainString() + " " + code + " cannot be sent to Stripe, which takes "
                    + exponent + " decimals in " + code + (exponent == 3 ? " and a last digit of 0" : "") + "; refused, not rounded");
        }
        if (exponent == 3 && exact.movePointRight(3).longValueExact() % 10 != 0) {
            throw new IllegalArgumentException("amount " + exact.toPlainString() + " " + code + " must end in 0 at Stripe; refused, not rounded");
        }
        return exact.movePointRight(exponent).longValueExact();
    }

    /** {@code units} of Stripe's for {@code currency} as an amount with the currency's ISO decimals. */
    public static BigDecimal fromStripe(long units, String currency) {
        String code = currency.toUpperCase(Locale.ROOT);
        BigDecimal amount = BigDecimal.valueOf(units, exponent(code));
        int digits = MinorUnits.digits(code);
        return amount.scale() > digits ? amount.stripTrailingZeros().setScale(Math.max(digits, 0), java.math.RoundingMode.UNNECESSARY)
                : amount.setScale(digits);
    }
}

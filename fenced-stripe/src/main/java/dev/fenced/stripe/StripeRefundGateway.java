package dev.fenced.stripe;

import com.stripe.StripeClient;
import com.stripe.exception.AuthenticationException;
import com.stripe.exception.CardException;
import com.stripe.exception.IdempotencyException;
import com.stripe.exception.InvalidRequestException;
import com.stripe.exception.PermissionException;
import com.stripe.exception.RateLimitException;
import com.stripe.exception.StripeException;
import com.stripe.model.Refund;
import com.stripe.net.RequestOptions;
import com.stripe.param.RefundCreateParams;
import com.stripe.param.RefundListParams;
import dev.fenced.provider.GatewayException;
import dev.fenced.provider.GatewayException.Outcome;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.RefundGateway;
import dev.fenced.provider.StripeMinorUnits;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@link RefundGateway} on Stripe's official Java library ({@code com.stripe:stripe-java}): a
 * refund is made against the row's charge or payment intent ({@link ChargeResolver}) for the amount in minor units,
 * with the row's key as Stripe's {@code Idempotency-Key}, and with the refund id, the merchant, the
 * key and the worker's owner in its {@code metadata}, where every lookup finds them again.
 *
 * <p>Stripe has no lookup by idempotency key: {@link #findByKey(String, String, String)} lists the
 * refunds of the row's charge (or payment intent) and matches the key kept in metadata (so it still finds a refund after
 * Stripe forgot the key, 24 h on), and the one-argument {@link #findByKey(String)}, which cannot know
 * the charge, finds nothing. {@link #refundsOf} lists every refund of the account and keeps the
 * merchant's: it reads the whole account, and is meant for reconciliation, not for every run.
 *
 * <p>Errors, by what they mean for the money: a card error and the 400/404s that refuse this refund
 * (an amount above what the charge has left, a charge already refunded or disputed, an unknown
 * charge) are {@link Outcome#REJECTED}; any other 400/404 (an unknown parameter, a wrong API base)
 * and 401/403 are {@link Outcome#UNAVAILABLE}, the latter with
 * {@link GatewayException#credentialsRefused()}; a 429 is {@link Outcome#UNAVAILABLE} with its
 * {@code Retry-After}; a key used before or in use now ({@code idempotency_error}, 409), a
 * connection error, a 5xx or an answer the library could not read are {@link Outcome#UNKNOWN}
 * (a refund under the key may exist: looked up, never marked failed). Amounts go in Stripe's
 * units ({@link StripeMinorUnits}); one that does not fit is refused before anything is sent. The library's own retries are off: the
 * worker retries, under the same key. Messages name Stripe's code and request id, never the key.
 * Immutable and thread-safe.
 */
public final class StripeRefundGateway implements RefundGateway {
    /** Metadata keys the adapter writes on every refund. */
    public static final String REFUND_ID = "refund_id";
    public static final String MERCHANT = "merchant";
    public static final String IDEMPOTENCY_KEY = "idempotency_key";

    private final StripeClient client;
    private final ChargeResolver charges;
    private final Duration callTimeout;

    private StripeRefundGateway(Builder b) {
        this.charges = Objects.requireNonNull(b.charges, "charges");
        this.callTimeout = b.timeout;
        this.client = StripeClient.builder().setApiKey(b.apiKey).setApiBase(b.apiBase.toString().replaceAll("/+$", ""))
                .setMaxNetworkRetries(0).setConnectTimeout((int) connectTimeout().toMillis())
                .setReadTimeout((int) b.timeout.toMillis()).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency) {
        return createRefund(idempotencyKey, reference, merchant, amount, currency, Map.of());
    }

    @Override
    public GatewayRefund createRefund(String idempotencyKey, String reference, String merchant, BigDecimal amount, String currency,
                                      Map<String, String> metadata) {
        long units;
        try {
            units = StripeMinorUnits.toStripe(amount, currency);
        } catch (IllegalArgumentException e) {
            throw new GatewayException("refund of " + reference + " not sent to Stripe: " + e.getMessage(), 0, Outcome.REJECTED, e);
        }
        String charge = chargeOf(merchant, reference);
        Map<String, String> all = new TreeMap<>(metadata);
        all.put(REFUND_ID, reference);
        all.put(MERCHANT, merchant);
        all.put(IDEMPOTENCY_KEY, idempotencyKey);
        RefundCreateParams.Builder refund = RefundCreateParams.builder().setAmount(units).putAllMetadata(all);
        RefundCreateParams params = (isPaymentIntent(charge) ? refund.setPaymentIntent(charge) : refund.setCharge(charge)).build();
        try {
            return toGateway(client.refunds().create(params, RequestOptions.builder().setIdempotencyKey(idempotencyKey).build()));
        } catch (StripeException e) {
            throw classify("refund of " + reference, e);
        }
    }

    /**
     * Stripe has no lookup by key alone, and this adapter cannot tell which charge to search: it
     * answers that the refund's existence is unknown (never "absent", which would let a caller send
     * it again). Callers ask {@link #findByKey(String, String, String)}; a wrapper must forward that.
     *
     * @throws GatewayException always, {@link Outcome#UNKNOWN}
     */
    @Override
    public Optional<GatewayRefund> findByKey(String idempotencyKey) {
        throw new GatewayException("Stripe has no lookup by idempotency key alone: ask findByKey(merchant, reference, key)", 0,
                Outcome.UNKNOWN, null);
    }

    /** The refund of the row's charge whose metadata names this key, however old. */
    @Override
    public Optional<GatewayRefund> findByKey(String merchant, String reference, String idempotencyKey) {
        return refundsOfCharge(merchant, reference).stream().filter(r -> idempotencyKey.equals(r.idempotencyKey())).findFirst();
    }

    /** The refunds of the row's charge made for {@code reference} of {@code merchant}, as their metadata says. */
    @Override
    public List<GatewayRefund> findByReference(String merchant, String reference) {
        return refundsOfCharge(merchant, reference).stream().filter(r -> reference.equals(r.reference()) && merchant.equals(r.merchant()))
                .toList();
    }

    @Override
    public Optional<GatewayRefund> refundById(String merchant, String refundId) {
        try {
            GatewayRefund refund = toGateway(client.refunds().retrieve(refundId));
            return merchant.equals(refund.merchant()) ? Optional.of(refund) : Optional.empty();
        } catch (InvalidRequestException e) {
            if (Integer.valueOf(404).equals(e.getStatusCode())) {
                return Optional.empty();
            }
            throw classify("lookup of refund " + refundId, e);
        } catch (StripeException e) {
            throw classify("lookup of refund " + refundId, e);
        }
    }

    /** The longest one request may take: its connect and read timeouts together (per page, for a lookup). */
    @Override
    public Optional<Duration> callTimeout() {
        return Optional.of(callTimeout.plus(connectTimeout()));
    }

    private Duration connectTimeout() {
        return Duration.ofMillis(Math.min(callTimeout.toMillis(), 5_000));
    }

    /** The resolver's charge for the row; a missing one, or a resolver that fails, sends nothing. */
    private String chargeOf(String merchant, String reference) {
        String charge;
        try {
            charge = charges.chargeOf(merchant, reference);
        } catch (RuntimeException e) {
            throw new GatewayException("no charge for " + reference + " of " + merchant + ": the ChargeResolver failed: " + e.getMessage(),
                    0, Outcome.UNAVAILABLE, e);
        }
        if (charge == null || charge.isBlank()) {
            throw new GatewayException("no charge for " + reference + " of " + merchant + ": the ChargeResolver gave none", 0,
                    Outcome.UNAVAILABLE, null);
        }
        return charge;
    }

    /** Every refund of the account whose metadata names {@code merchant}, oldest first. Reads the whole account. */
    @Override
    public List<GatewayRefund> refundsOf(String merchant) {
        List<GatewayRefund> out = new ArrayList<>();
        for (GatewayRefund refund : list("listing the refunds of " + merchant, RefundListParams.builder().setLimit(100L).build())) {
            if (merchant.equals(refund.merchant())) {
                out.add(refund);
            }
        }
        out.sort((a, b) -> Long.compare(a.createdAt(), b.createdAt()));
        return out;
    }

    /** The refunds of the row's charge, or of its payment intent when the resolver names one. */
    private List<GatewayRefund> refundsOfCharge(String merchant, String reference) {
        String charge = chargeOf(merchant, reference);
        RefundListParams.Builder params = RefundListParams.builder().setLimit(100L);
        if (isPaymentIntent(charge)) {
            return list("listing the refunds of payment intent " + charge, params.setPaymentIntent(charge).build());
        }
        return list("listing the refunds of charge " + charge, params.setCharge(charge).build());
    }

    /** Stripe's payment intent ids begin {@code pi_}; anything else is taken for a charge. */
    private static boolean isPaymentIntent(String id) {
        return id.startsWith("pi_");
    }

    /** Every page of a list; a failure on any page is classified, as the first page's is. */
    private List<GatewayRefund> list(String what, RefundListParams params) {
        List<GatewayRefund> out = new ArrayList<>();
        try {
            for (Refund refund : client.refunds().list(params).autoPagingIterable()) {
                out.add(toGateway(refund));
            }
        } catch (StripeException e) {
            throw classify(what, e);
        } catch (RuntimeException e) {
            // The library's pages after the first wrap their StripeException in a RuntimeException.
            if (e.getCause() instanceof StripeException stripe) {
                throw classify(what, stripe);
            }
            throw new GatewayException(what + " failed: " + e.getMessage(), 0, Outcome.UNKNOWN, e);
        }
        return out;
    }

    /** A Stripe refund as the seam sees it: reference, merchant and key from the metadata the adapter wrote. */
    static GatewayRefund toGateway(Refund refund) {
        Map<String, String> metadata = refund.getMetadata() == null ? Map.of() : refund.getMetadata();
        String currency = refund.getCurrency() == null ? "" : refund.getCurrency().toUpperCase(Locale.ROOT);
        long units = refund.getAmount() == null ? 0 : refund.getAmount();
        BigDecimal amount;
        try {
            amount = StripeMinorUnits.fromStripe(units, currency);
        } catch (RuntimeException notThisCurrencysAmount) {
            amount = BigDecimal.valueOf(units); // as Stripe said it: it will match no row, and be reported rather than confirmed
        }
        long created = refund.getCreated() == null ? 0 : refund.getCreated() * 1000;
        return new GatewayRefund(refund.getId(), metadata.getOrDefault(IDEMPOTENCY_KEY, ""), metadata.getOrDefault(REFUND_ID, ""),
                metadata.getOrDefault(MERCHANT, ""), amount, currency, created, metadata, refund.getStatus(), refund.getFailureReason());
    }

    /** Codes of a 400 that refuse this refund for good; any other 400 or 404 is a configuration problem: nothing made, try later. */
    private static final java.util.Set<String> REFUSALS = java.util.Set.of("amount_too_large", "charge_already_refunded", "charge_disputed",
            "charge_expired_for_capture", "resource_missing", "refund_disputed_payment", "balance_insufficient", "insufficient_funds");

    /** Stripe's error, classified by what it says about the refund. */
    static GatewayException classify(String what, StripeException e) {
        int status = e.getStatusCode() == null ? 0 : e.getStatusCode();
        String message = what + " failed at Stripe: " + e.getClass().getSimpleName() + (e.getCode() == null ? "" : " " + e.getCode())
                + " (" + status + ")" + (e.getRequestId() == null ? "" : ", request " + e.getRequestId());
        if (e instanceof RateLimitException) { // first: the library makes it a kind of InvalidRequestException
            return new GatewayException(message, 429, Outcome.UNAVAILABLE, retryAfter(e), e);
        }
        if (e instanceof IdempotencyException || status == 409) {
            // The key was used before, or is in use now: a refund under it may exist. Looked up, never marked failed.
            return new GatewayException(message, status, Outcome.UNKNOWN, e);
        }
        if (e instanceof CardException) {
            return new GatewayException(message, status, Outcome.REJECTED, e);
        }
        if (e instanceof InvalidRequestException) {
            boolean refusal = e.getCode() != null && REFUSALS.contains(e.getCode()) && (status == 400 || status == 402 || status == 404);
            return new GatewayException(message, status, refusal ? Outcome.REJECTED : Outcome.UNAVAILABLE, e);
        }
        if (e instanceof AuthenticationException || e instanceof PermissionException) {
            return new GatewayException(message, status == 0 ? 401 : status, Outcome.UNAVAILABLE, e);
        }
        // A connection error, a 5xx, an answer the library could not read: the request may have made the refund.
        return new GatewayException(message, status, Outcome.UNKNOWN, e);
    }

    private static Duration retryAfter(StripeException e) {
        if (e.getStripeError() == null || e.getStripeError().getLastResponse() == null) {
            return null;
        }
        return e.getStripeError().getLastResponse().headers().firstValue("Retry-After").flatMap(value -> {
            try {
                return Optional.of(Duration.ofSeconds(Long.parseLong(value.strip())));
            } catch (NumberFormatException notSeconds) {
                return Optional.empty();
            }
        }).orElse(null);
    }

    /**
     * Builds a {@link StripeRefundGateway}: Stripe's API at {@code https://api.stripe.com}, calls
     * bounded by 10 s.
     */
    public static final class Builder {
        private String apiKey;
        private URI apiBase = URI.create("https://api.stripe.com");
        private ChargeResolver charges;
        private Duration timeout = Duration.ofSeconds(10);

        /** The secret key ({@code sk_...} or a restricted {@code rk_...}); never printed. */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /** Another API base, e.g. a test double of Stripe's API; https://api.stripe.com by default. */
        public Builder apiBase(URI apiBase) {
            this.apiBase = apiBase;
            return this;
        }

        /** Which charge or payment intent each refund row refunds. */
        public Builder charges(ChargeResolver charges) {
            this.charges = charges;
            return this;
        }

        /** The read timeout of one request, 10 s by default; connecting may take up to 5 s more ({@link #callTimeout()}). */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** @throws IllegalArgumentException for a missing key or charge resolver, a base that is not http(s), or a timeout out of range */
        public StripeRefundGateway build() {
            if (apiKey == null || apiKey.isBlank() || apiKey.chars().anyMatch(Character::isWhitespace)) {
                throw new IllegalArgumentException("a Stripe API key is needed (no whitespace)");
            }
            if (apiBase == null || !("https".equals(apiBase.getScheme()) || "http".equals(apiBase.getScheme())) || apiBase.getHost() == null
                    || apiBase.getRawUserInfo() != null) {
                throw new IllegalArgumentException("the Stripe API base must be an http(s) URL with a host and no user-info");
            }
            if (charges == null) {
                throw new IllegalArgumentException("a ChargeResolver is needed: which charge each refund row refunds");
            }
            if (timeout == null || timeout.compareTo(Duration.ofMillis(100)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
                throw new IllegalArgumentException("the Stripe call timeout must be 100 ms to 5 min, got " + timeout);
            }
            return new StripeRefundGateway(this);
        }
    }
}

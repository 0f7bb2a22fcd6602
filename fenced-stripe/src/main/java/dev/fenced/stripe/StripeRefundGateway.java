package dev.fenced.stripe;

import com.stripe.StripeClient;
import com.stripe.exception.ApiConnectionException;
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
import dev.fenced.gateway.GatewayException;
import dev.fenced.gateway.GatewayException.Outcome;
import dev.fenced.gateway.GatewayRefund;
import dev.fenced.gateway.MinorUnits;
import dev.fenced.gateway.RefundGateway;
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
 * refund is made against the row's charge ({@link ChargeResolver}) for the amount in minor units,
 * with the row's key as Stripe's {@code Idempotency-Key}, and with the refund id, the merchant, the
 * key and the worker's owner in its {@code metadata}, where every lookup finds them again.
 *
 * <p>Stripe has no lookup by idempotency key: {@link #findByKey(String, String, String)} lists the
 * row's charge's refunds and matches the key kept in metadata (so it still finds a refund after
 * Stripe forgot the key, 24 h on), and the one-argument {@link #findByKey(String)}, which cannot know
 * the charge, finds nothing. {@link #refundsOf} lists every refund of the account and keeps the
 * merchant's: it reads the whole account, and is meant for reconciliation, not for every run.
 *
 * <p>Errors, by what they mean for the money: a key reused with other parameters
 * ({@code idempotency_error}), any other 400/402/404 (an amount above what the charge has left
 * unrefunded, an unknown charge) are {@link Outcome#REJECTED}; 401 and 403 are
 * {@link Outcome#UNAVAILABLE} with {@link GatewayException#credentialsRefused()}; a 429 is
 * {@link Outcome#UNAVAILABLE} with its {@code Retry-After}; a connection error or a 5xx is
 * {@link Outcome#UNKNOWN} (the request may have been made). The library's own retries are off: the
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
                .setMaxNetworkRetries(0).setConnectTimeout((int) Math.min(b.timeout.toMillis(), 5_000))
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
        long minor;
        try {
            minor = MinorUnits.toMinor(amount, currency);
        } catch (IllegalArgumentException e) {
            throw new GatewayException("refund of " + reference + " not sent to Stripe: " + e.getMessage(), 0, Outcome.REJECTED, e);
        }
        Map<String, String> all = new TreeMap<>(metadata);
        all.put(REFUND_ID, reference);
        all.put(MERCHANT, merchant);
        all.put(IDEMPOTENCY_KEY, idempotencyKey);
        RefundCreateParams params = RefundCreateParams.builder().setCharge(charges.chargeOf(merchant, reference)).setAmount(minor)
                .putAllMetadata(all).build();
        try {
            return toGateway(client.refunds().create(params, RequestOptions.builder().setIdempotencyKey(idempotencyKey).build()));
        } catch (StripeException e) {
            throw classify("refund of " + reference, e);
        }
    }

    /** Stripe has no lookup by key alone: see {@link #findByKey(String, String, String)}. Always empty. */
    @Override
    public Optional<GatewayRefund> findByKey(String idempotencyKey) {
        return Optional.empty();
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

    @Override
    public Optional<Duration> callTimeout() {
        return Optional.of(callTimeout);
    }

    /** Every refund of the account whose metadata names {@code merchant}, oldest first. Reads the whole account. */
    @Override
    public List<GatewayRefund> refundsOf(String merchant) {
        List<GatewayRefund> out = new ArrayList<>();
        try {
            for (Refund refund : client.refunds().list(RefundListParams.builder().setLimit(100L).build()).autoPagingIterable()) {
                GatewayRefund mapped = toGateway(refund);
                if (merchant.equals(mapped.merchant())) {
                    out.add(mapped);
                }
            }
        } catch (StripeException e) {
            throw classify("listing the refunds of " + merchant, e);
        }
        out.sort((a, b) -> Long.compare(a.createdAt(), b.createdAt()));
        return out;
    }

    private List<GatewayRefund> refundsOfCharge(String merchant, String reference) {
        String charge = charges.chargeOf(merchant, reference);
        List<GatewayRefund> out = new ArrayList<>();
        try {
            for (Refund refund : client.refunds().list(RefundListParams.builder().setCharge(charge).setLimit(100L).build())
                    .autoPagingIterable()) {
                out.add(toGateway(refund));
            }
        } catch (StripeException e) {
            throw classify("listing the refunds of charge " + charge, e);
        }
        return out;
    }

    /** A Stripe refund as the seam sees it: reference, merchant and key from the metadata the adapter wrote. */
    static GatewayRefund toGateway(Refund refund) {
        Map<String, String> metadata = refund.getMetadata() == null ? Map.of() : refund.getMetadata();
        String currency = refund.getCurrency() == null ? "" : refund.getCurrency().toUpperCase(Locale.ROOT);
        BigDecimal amount = MinorUnits.fromMinor(refund.getAmount() == null ? 0 : refund.getAmount(), currency);
        long created = refund.getCreated() == null ? 0 : refund.getCreated() * 1000;
        return new GatewayRefund(refund.getId(), metadata.getOrDefault(IDEMPOTENCY_KEY, ""), metadata.getOrDefault(REFUND_ID, ""),
                metadata.getOrDefault(MERCHANT, ""), amount, currency, created, metadata, refund.getStatus(), refund.getFailureReason());
    }

    /** Stripe's error, classified by what it says about the refund. */
    static GatewayException classify(String what, StripeException e) {
        int status = e.getStatusCode() == null ? 0 : e.getStatusCode();
        String message = what + " failed at Stripe: " + e.getClass().getSimpleName() + (e.getCode() == null ? "" : " " + e.getCode())
                + " (" + status + ")" + (e.getRequestId() == null ? "" : ", request " + e.getRequestId());
        if (e instanceof RateLimitException) { // first: the library makes it a kind of InvalidRequestException
            return new GatewayException(message, 429, Outcome.UNAVAILABLE, retryAfter(e), e);
        }
        if (e instanceof IdempotencyException || e instanceof CardException || e instanceof InvalidRequestException) {
            return new GatewayException(message, status, Outcome.REJECTED, e);
        }
        if (e instanceof AuthenticationException || e instanceof PermissionException) {
            return new GatewayException(message, status == 0 ? 401 : status, Outcome.UNAVAILABLE, e);
        }
        if (e instanceof ApiConnectionException) {
            return new GatewayException(message, 0, Outcome.UNKNOWN, e); // the request may have reached Stripe
        }
        return new GatewayException(message, status, status == 0 ? Outcome.UNKNOWN : GatewayException.classify(status), e);
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

        /** Which charge each refund row refunds. */
        public Builder charges(ChargeResolver charges) {
            this.charges = charges;
            return this;
        }

        /** The longest one call may take (connect at most 5 s of it); 10 s by default. */
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

package dev.fenced.gateway;

import com.sun.net.httpserver.HttpExchange;
import dev.fenced.provider.GatewayRefund;
import dev.fenced.provider.StripeMinorUnits;
import dev.fenced.provider.WebhookEvent;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The simulated gateway's Stripe-shaped surface, enough for Stripe's official Java library to
 * refund against it: {@code POST /v1/charges} (a captured charge, for tests), {@code POST
 * /v1/payment_intents} ({@code confirm=true}: succeeded at once, its charge captured), {@code POST
 * /v1/refunds} (form-encoded {@code charge} or {@code payment_intent}, {@code amount} in minor
 * units, {@code metadata[..]}; {@code Idempotency-Key}), {@code GET /v1/refunds/{id}}, {@code GET
 * /v1/refunds?charge=..} or {@code ?payment_intent=..} (a list object, {@code limit} and
 * {@code starting_after}), Stripe's error objects and its
 * bearer authentication. Refunds go into the same ledger as {@code /refunds}, with the refund's
 * {@code metadata[refund_id]} and {@code metadata[merchant]} (else the charge's) as reference and
 * merchant, and the same lifecycle, key retention, faults and webhooks.
 *
 * <p>Modelled: an idempotent replay returns the first refund; the same key with other parameters
 * is a 400 {@code idempotency_error}; refunds of a charge never exceed what it captured (400
 * {@code amount_too_large}, or {@code charge_already_refunded}; a refund that failed gives its amount
 * back); the first answer under a key, a 500 included, is the answer to every later request under
 * it while the key is kept ({@code Idempotent-Replayed}); amounts in Stripe's units
 * ({@link StripeMinorUnits}); an unknown charge or refund is a 404 {@code resource_missing}; a wrong
 * key is a 401; the latency and the injected faults apply: 429 {@code rate_limit} and 503 (nothing
 * made, nothing saved under the key), 500 {@code api_error} after the refund was made, a late
 * answer; Stripe's test card whose refunds fail ({@code source=tok_refundFail} or
 * {@code payment_method=pm_card_refundFail} on the charge): its refunds succeed, then fail
 * ({@code expired_or_canceled_card}) and give their amount back, as {@link RefundStatuses} times it.
 * Not modelled: payment intents not confirmed at creation (manual capture, 3-D Secure), connected accounts ({@code Stripe-Account}), expansion, API versions, newest-first order,
 * {@code ending_before}, partial-capture charges, {@code reason}, and Stripe's ids ({@code gw_} ids,
 * not {@code re_}). Charges live in memory: a restart forgets them, not the refunds.
 */
final class StripeEndpoint {
    /** Where the refund's charge is kept on the ledger; never shown as metadata. */
    static final String CHARGE_KEY = "stripe_charge";
    /** Where the refund's payment intent, if its charge has one, is kept on the ledger; never shown as metadata. */
    static final String PAYMENT_INTENT_KEY = "stripe_payment_intent";
    /** Marks, on the ledger, a refund of a charge made with Stripe's refund-failing test card; never shown as metadata. */
    static final String FAILS_AFTER_SUCCESS_KEY = "stripe_refund_fails";
    /** What this surface keeps on the ledger's refunds for itself: never a caller's metadata, never shown as metadata. */
    static final Set<String> RESERVED_KEYS = Set.of(CHARGE_KEY, PAYMENT_INTENT_KEY, FAILS_AFTER_SUCCESS_KEY);
    /** Stripe's test token and payment method whose refunds succeed and then fail. */
    private static final Set<String> REFUND_FAIL_CARDS = Set.of("tok_refundFail", "pm_card_refundFail");

    /** @param paymentIntent the payment intent it is the charge of; null for a charge made alone */
    private record Charge(String id, long amount, String currency, String merchant, boolean refundsFail, String paymentIntent) {
    }

    /**
     * What a key was first used with, for Stripe's "same parameters" check, and the answer it got,
     * which Stripe gives again, 500s included, to every later request under the key while it keeps it.
     */
    private record KeyUse(String parameters, long at, GatewayHttp.Response response) {
    }

    private final GatewayConfig config;
    private final Ledger ledger;
    private final RefundStatuses statuses;
    private final WebhookSender webhooks;
    private final Map<String, Charge> charges = new ConcurrentHashMap<>();
    private final Map<String, KeyUse> keys = new ConcurrentHashMap<>();
    private final AtomicLong chargeIds = new AtomicLong();
    private final Map<String, Charge> paymentIntents = new ConcurrentHashMap<>();
    private final AtomicLong paymentIntentIds = new AtomicLong();
    /** Part of every charge id: a restarted gateway, which forgets its charges, never hands out an old one's id. */
    private final String run = Long.toHexString(new java.security.SecureRandom().nextLong() & 0xffffffL);

    StripeEndpoint(GatewayConfig config, Ledger ledger, RefundStatuses statuses, WebhookSender webhooks) {
        this.config = config;
        this.ledger = ledger;
        this.statuses = statuses;
        this.webhooks = webhooks;
    }

    void handle(HttpExchange exchange, RefundEndpoint faults) throws IOException {
        GatewayHttp.handle(exchange, () -> {
            GatewayHttp.Response refused = authenticate(exchange);
            if (refused != null) {
                return refused;
            }
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (path.equals("/v1/charges") && method.equals("POST")) {
                return createCharge(form(exchange));
            }
            if (path.equals("/v1/payment_intents") && method.equals("POST")) {
                return createPaymentIntent(form(exchange));
            }
            if (path.equals("/v1/refunds") && method.equals("POST")) {
                return createRefund(exchange, form(exchange), faults);
            }
            if (path.equals("/v1/refunds") && method.equals("GET")) {
                return listRefunds(query(exchange.getRequestURI().getRawQuery()));
            }
            if (path.startsWith("/v1/refunds/") && method.equals("GET")) {
                String id = path.substring("/v1/refunds/".length());
                return ledger.matching(r -> r.id().equals(id) && r.metadata().containsKey(CHARGE_KEY)).stream().findFirst()
                        .map(r -> new GatewayHttp.Response(200, object(statuses.current(r))))
                        .orElse(error(404, "invalid_request_error", "resource_missing", "No such refund: '" + GatewayHttp.shorten(id) + "'", "id"));
            }
            return error(404, "invalid_request_error", null, "Unrecognized request URL (" + method + ": " + path + ")", null);
        });
    }

    /** Stripe's secret key as a bearer token, or as a Basic user (Stripe takes both); never echoed. */
    private GatewayHttp.Response authenticate(HttpExchange exchange) {
        if (config.apiKey() == null) {
            return null;
        }
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        String key = null;
        if (header != null && header.startsWith("Bearer ")) {
            key = header.substring(7).strip();
        } else if (header != null && header.startsWith("Basic ")) {
            try {
                String user = new String(java.util.Base64.getDecoder().decode(header.substring(6).strip()), StandardCharsets.UTF_8);
                key = user.contains(":") ? user.substring(0, user.indexOf(':')) : user;
            } catch (IllegalArgumentException malformed) {
                key = null;
            }
        }
        if (key == null || !MessageDigest.isEqual(key.getBytes(StandardCharsets.UTF_8), config.apiKey().getBytes(StandardCharsets.UTF_8))) {
            return error(401, "invalid_request_error", null, header == null ? "You did not provide an API key." : "Invalid API Key provided.", null);
        }
        return null;
    }

    /** Stripe's 400 for a charge without a positive amount and a currency; null when the form has both. */
    private static GatewayHttp.Response chargeRefused(Map<String, String> form) {
        boolean valid = units(form.get("amount")) > 0 && form.getOrDefault("currency", "").toLowerCase(Locale.ROOT).matches("[a-z]{3}");
        return valid ? null : error(400, "invalid_request_error", "parameter_invalid_integer", "amount and currency are required", "amount");
    }

    /** A captured charge of a form {@link #chargeRefused} passed; {@code paymentIntent} is the intent it is the charge of, or null. */
    private Charge createCharge(Map<String, String> form, String paymentIntent) {
        boolean refundsFail = REFUND_FAIL_CARDS.contains(form.getOrDefault("source", form.getOrDefault("payment_method", "")));
        Charge charge = new Charge(String.format("ch_%s%06d", run, chargeIds.incrementAndGet()), units(form.get("amount")),
                form.get("currency").toLowerCase(Locale.ROOT), form.getOrDefault("metadata[merchant]", "acct_default"), refundsFail,
                paymentIntent);
        charges.put(charge.id(), charge);
        return charge;
    }

    private GatewayHttp.Response createCharge(Map<String, String> form) {
        GatewayHttp.Response refused = chargeRefused(form);
        if (refused != null) {
            return refused;
        }
        Charge charge = createCharge(form, null);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", charge.id());
        body.put("object", "charge");
        body.put("amount", charge.amount());
        body.put("amount_captured", charge.amount());
        body.put("amount_refunded", 0);
        body.put("captured", true);
        body.put("currency", charge.currency());
        body.put("metadata", Map.of("merchant", charge.merchant()));
        body.put("payment_intent", charge.paymentIntent());
        return new GatewayHttp.Response(200, body);
    }

    /** A payment intent confirmed at once ({@code confirm=true} is all this surface knows): succeeded, its charge captured. */
    private GatewayHttp.Response createPaymentIntent(Map<String, String> form) {
        if (!"true".equals(form.get("confirm"))) {
            return error(400, "invalid_request_error", "parameter_missing", "this surface makes payment intents with confirm=true only",
                    "confirm");
        }
        GatewayHttp.Response refused = chargeRefused(form);
        if (refused != null) {
            return refused;
        }
        String id = String.format("pi_%s%06d", run, paymentIntentIds.incrementAndGet());
        Charge charge = createCharge(form, id);
        paymentIntents.put(id, charge);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", id);
        body.put("object", "payment_intent");
        body.put("amount", charge.amount());
        body.put("amount_received", charge.amount());
        body.put("currency", charge.currency());
        body.put("status", "succeeded");
        body.put("latest_charge", charge.id());
        body.put("metadata", Map.of("merchant", charge.merchant()));
        return new GatewayHttp.Response(200, body);
    }

    private GatewayHttp.Response createRefund(HttpExchange exchange, Map<String, String> form, RefundEndpoint faults) {
        String key = exchange.getRequestHeaders().getFirst("Idempotency-Key");
        boolean idempotent = key != null && config.idempotency();
        String parameters = new TreeMap<>(form).toString();
        if (idempotent) {
            KeyUse earlier = keys.get(key);
            if (earlier != null && config.clock().millis() - earlier.at() < config.keyRetention().toMillis()) {
                if (!earlier.parameters().equals(parameters)) {
                    return error(400, "idempotency_error", null, "Keys for idempotent requests can only be used with the same parameters"
                            + " they were first used with. Try using a key other than '" + GatewayHttp.shorten(key) + "' if you meant"
                            + " to execute a different request.", null);
                }
                return replay(earlier.response());
            }
        }
        boolean byIntent = form.containsKey("payment_intent");
        if (byIntent == form.containsKey("charge")) {
            return error(400, "invalid_request_error", "parameter_missing", "One of the following parameters is required: charge,"
                    + " payment_intent (not both).", null);
        }
        String target = form.getOrDefault(byIntent ? "payment_intent" : "charge", "");
        Charge charge = byIntent ? paymentIntents.get(target) : charges.get(target);
        if (charge == null) {
            return error(404, "invalid_request_error", "resource_missing", "No such " + (byIntent ? "payment_intent" : "charge") + ": '"
                    + GatewayHttp.shorten(target) + "'", byIntent ? "payment_intent" : "charge");
        }
        RefundEndpoint.sleep(config.latency());
        double draw = faults.draw();
        if (draw < 1.0 && draw >= 1.0 - config.rateLimited()) { // nothing executed: nothing saved under the key
            long seconds = (config.retryAfter().toMillis() + 999) / 1000;
            return new GatewayHttp.Response(429, stripeError("invalid_request_error", "rate_limit", "Too many requests", null),
                    Map.of("Retry-After", Long.toString(seconds)));
        }
        if (draw < config.failBefore()) {
            return new GatewayHttp.Response(503, stripeError("api_error", null, "injected fault before creating the refund", null));
        }
        Map<String, String> metadata = new TreeMap<>();
        form.forEach((name, value) -> {
            if (name.startsWith("metadata[") && name.endsWith("]")) {
                metadata.put(name.substring("metadata[".length(), name.length() - 1), value);
            }
        });
        GatewayHttp.Response answer;
        synchronized (charge) { // the captured amount bounds every refund of the charge, whichever arrives first
            long refundable = charge.amount() - refundedOf(charge.id());
            long amount = form.containsKey("amount") ? units(form.get("amount")) : refundable;
            if (refundable <= 0) {
                return error(400, "invalid_request_error", "charge_already_refunded", "Charge " + charge.id() + " has already been refunded.",
                        null);
            }
            if (amount <= 0) {
                return error(400, "invalid_request_error", "parameter_invalid_integer", "Invalid positive integer", "amount");
            }
            if (amount > refundable) {
                return error(400, "invalid_request_error", "amount_too_large", "Refund amount (" + amount + ") is greater than unrefunded"
                        + " amount on charge (" + refundable + ")", "amount");
            }
            String currency = charge.currency().toUpperCase(Locale.ROOT);
            Ledger.Request request = new Ledger.Request(key == null ? "stripe_" + UUID.randomUUID() : key,
                    metadata.getOrDefault("refund_id", "refund_" + UUID.randomUUID()), metadata.getOrDefault("merchant", charge.merchant()),
                    StripeMinorUnits.fromStripe(amount, currency), currency, withCharge(metadata, charge));
            Ledger.Result result = ledger.createOrReplay(request, config.idempotency());
            if (result.outcome() == Ledger.Outcome.CONFLICT) {
                return error(400, "idempotency_error", null, "Keys for idempotent requests can only be used with the same parameters they"
                        + " were first used with.", null);
            }
            if (webhooks != null && result.outcome() == Ledger.Outcome.CREATED) {
                webhooks.created(result.refund());
            }
            answer = new GatewayHttp.Response(200, object(statuses.current(result.refund())));
        }
        if (draw < config.failBefore() + config.failAfter()) {
            answer = new GatewayHttp.Response(500, stripeError("api_error", null, "injected fault after creating the refund", null));
        } else if (draw < config.failBefore() + config.failAfter() + config.slow()) {
            RefundEndpoint.sleep(config.slowDelay());
        }
        if (idempotent) {
            remember(key, new KeyUse(parameters, config.clock().millis(), answer));
        }
        return answer;
    }

    /** A saved answer again, as Stripe gives it, marked as a replay. */
    private static GatewayHttp.Response replay(GatewayHttp.Response first) {
        Map<String, String> headers = new LinkedHashMap<>(first.headers());
        headers.put("Idempotent-Replayed", "true");
        return new GatewayHttp.Response(first.status(), first.body(), headers);
    }

    /** Keeps the key's first answer, replacing one past retention, and drops expired keys now and then. */
    private void remember(String key, KeyUse use) {
        long retention = config.keyRetention().toMillis();
        keys.compute(key, (k, earlier) -> earlier == null || use.at() - earlier.at() >= retention ? use : earlier);
        if (keys.size() > 10_000) {
            keys.values().removeIf(old -> use.at() - old.at() >= retention);
        }
    }

    private GatewayHttp.Response listRefunds(Map<String, String> query) {
        String charge = query.get("charge");
        if (query.containsKey("payment_intent")) {
            Charge ofIntent = paymentIntents.get(query.get("payment_intent"));
            charge = ofIntent == null ? "" : ofIntent.id(); // an unknown intent has no refunds
        }
        String ofCharge = charge;
        int limit = (int) Math.max(1, Math.min(100, units(query.getOrDefault("limit", "10"))));
        List<GatewayRefund> all = ledger.matching(r -> r.metadata().containsKey(CHARGE_KEY)
                && (ofCharge == null || ofCharge.equals(r.metadata().get(CHARGE_KEY))));
        int from = 0;
        String after = query.get("starting_after");
        if (after != null) {
            for (int i = 0; i < all.size(); i++) {
                if (all.get(i).id().equals(after)) {
                    from = i + 1;
                }
            }
        }
        List<Object> data = new ArrayList<>();
        for (int i = from; i < Math.min(all.size(), from + limit); i++) {
            data.add(object(statuses.current(all.get(i))));
        }
        Map<String, Object> list = new LinkedHashMap<>();
        list.put("object", "list");
        list.put("data", data);
        list.put("has_more", from + limit < all.size());
        list.put("url", "/v1/refunds");
        return new GatewayHttp.Response(200, list);
    }

    /** What the charge's refunds took from it: a refund that failed or was canceled gave its amount back. */
    private long refundedOf(String chargeId) {
        return ledger.matching(r -> chargeId.equals(r.metadata().get(CHARGE_KEY))).stream().map(statuses::current)
                .filter(r -> !r.finalStatus() || GatewayRefund.SUCCEEDED.equals(r.status()))
                .mapToLong(r -> StripeMinorUnits.toStripe(r.amount(), r.currency())).sum();
    }

    private static Map<String, String> withCharge(Map<String, String> metadata, Charge charge) {
        Map<String, String> out = new TreeMap<>(metadata);
        out.keySet().removeAll(RESERVED_KEYS); // the charge says them, not the caller's metadata
        out.put(CHARGE_KEY, charge.id());
        if (charge.paymentIntent() != null) {
            out.put(PAYMENT_INTENT_KEY, charge.paymentIntent());
        }
        if (charge.refundsFail()) {
            out.put(FAILS_AFTER_SUCCESS_KEY, "true");
        }
        return out;
    }

    /**
     * The body Stripe would send for {@code event} about a refund made on this surface: Stripe's
     * event envelope around Stripe's refund object; null for a refund made on {@code /refunds}.
     */
    static byte[] eventBody(WebhookEvent event) {
        if (event.refund() == null || !event.refund().metadata().containsKey(CHARGE_KEY)) {
            return null;
        }
        Map<String, Object> envelope = new LinkedHashMap<>();
        envelope.put("id", event.id());
        envelope.put("object", "event");
        envelope.put("api_version", "2025-03-31.basil");
        envelope.put("created", event.created());
        envelope.put("livemode", false);
        envelope.put("type", event.type());
        envelope.put("data", Map.of("object", object(event.refund())));
        try {
            return GatewayHttp.JSON.writeValueAsBytes(envelope);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("an event could not be written as JSON: " + e.getMessage(), e);
        }
    }

    /** A refund as Stripe writes it. */
    static Map<String, Object> object(GatewayRefund refund) {
        Map<String, Object> body = new LinkedHashMap<>();
        Map<String, String> metadata = new TreeMap<>(refund.metadata());
        String charge = metadata.get(CHARGE_KEY);
        String paymentIntent = metadata.get(PAYMENT_INTENT_KEY);
        metadata.keySet().removeAll(RESERVED_KEYS);
        body.put("id", refund.id());
        body.put("object", "refund");
        body.put("amount", StripeMinorUnits.toStripe(refund.amount(), refund.currency()));
        body.put("charge", charge);
        body.put("created", refund.createdAt() / 1000);
        body.put("currency", refund.currency().toLowerCase(Locale.ROOT));
        body.put("metadata", metadata);
        body.put("status", refund.status());
        body.put("failure_reason", refund.failureReason());
        body.put("payment_intent", paymentIntent);
        return body;
    }

    private static GatewayHttp.Response error(int status, String type, String code, String message, String param) {
        return new GatewayHttp.Response(status, stripeError(type, code, message, param));
    }

    private static Map<String, Object> stripeError(String type, String code, String message, String param) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("type", type);
        if (code != null) {
            error.put("code", code);
        }
        error.put("message", message);
        if (param != null) {
            error.put("param", param);
        }
        return Map.of("error", error);
    }

    private static long units(String value) {
        try {
            return value == null ? 0 : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Map<String, String> form(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readNBytes(64 * 1024);
        return query(new String(body, StandardCharsets.UTF_8));
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new LinkedHashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(name, value);
        }
        return out;
    }
}

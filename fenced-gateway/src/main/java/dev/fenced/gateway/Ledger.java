package dev.fenced.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.fenced.provider.GatewayRefund;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Every refund the gateway created, in order, appended to a JSON-lines file and synced to disk
 * before the creation returns, so that the ledger survives a restart or a crash. Thread-safe: one
 * lock orders creations, and the idempotency check and the creation happen under it together.
 *
 * <p>A key is remembered for {@code keyRetention} after the refund it made, by {@code clock}, then
 * forgotten, as a provider prunes its keys: a later request under it makes a new refund, and a
 * lookup by it finds nothing. The refunds themselves are kept for good.
 *
 * <p>On open, a last line that does not parse (an append cut short by a crash) is cut off the
 * file with a warning; a bad line anywhere else is corruption and the ledger refuses to open.
 */
final class Ledger implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final byte NEWLINE = '\n';

    /** What {@link #createOrReplay} did. */
    enum Outcome { CREATED, REPLAYED, CONFLICT }

    /** The refund created, replayed, or (for a conflict) created earlier under the same key. */
    record Result(Outcome outcome, GatewayRefund refund) {
    }

    /** A request to create a refund, already validated. The metadata is kept, not compared: it is not what is paid. */
    record Request(String key, String reference, String merchant, BigDecimal amount, String currency, Map<String, String> metadata) {
        boolean sameAs(GatewayRefund earlier) {
            return earlier.reference().equals(reference) && earlier.merchant().equals(merchant)
                    && earlier.amount().compareTo(amount) == 0 && earlier.currency().equals(currency);
        }
    }

    private final List<GatewayRefund> refunds = new ArrayList<>();
    private final Map<String, GatewayRefund> byKey = new HashMap<>();
    private final FileOutputStream out;
    private final Clock clock;
    private final long keyRetentionMillis;

    Ledger(Path file, Clock clock, Duration keyRetention) {
        this.clock = clock;
        this.keyRetentionMillis = keyRetention.toMillis();
        this.out = file == null ? null : open(file);
    }

    /**
     * Creates a refund; when {@code idempotent}, returns instead the refund already created under
     * the request's key: replayed if it was created for the same request, a conflict otherwise.
     */
    synchronized Result createOrReplay(Request request, boolean idempotent) {
        long now = clock.millis();
        GatewayRefund earlier = idempotent ? retained(request.key(), now) : null;
        if (earlier != null) {
            return new Result(request.sameAs(earlier) ? Outcome.REPLAYED : Outcome.CONFLICT, earlier);
        }
        GatewayRefund refund = new GatewayRefund(gatewayId(refunds.size() + 1), request.key(),
                request.reference(), request.merchant(), request.amount(), request.currency(), now,
                request.metadata());
        append(refund);
        remember(refund);
        return new Result(Outcome.CREATED, refund);
    }

    /**
     * {@code gw_000042}: the id of the ledger's 42nd refund, as {@code String.format("gw_%06d")}
     * writes it, without the format's parse under the ledger's lock.
     */
    static String gatewayId(int number) {
        String digits = Integer.toString(number);
        return digits.length() >= 6 ? "gw_" + digits : "gw_" + "000000".substring(digits.length()) + digits;
    }

    /** The refund created under {@code key} while the key is retained, if any (the first one when idempotency is off). */
    synchronized Optional<GatewayRefund> byKey(String key) {
        return Optional.ofNullable(retained(key, clock.millis()));
    }

    private GatewayRefund retained(String key, long now) {
        GatewayRefund refund = byKey.get(key);
        return refund == null || expired(refund, now) ? null : refund;
    }

    private boolean expired(GatewayRefund refund, long now) {
        return now - refund.createdAt() >= keyRetentionMillis;
    }

    /** The refunds that match, in creation order. */
    synchronized List<GatewayRefund> matching(Predicate<GatewayRefund> filter) {
        return refunds.stream().filter(filter).toList();
    }

    synchronized List<GatewayRefund> all() {
        return List.copyOf(refunds);
    }

    private void remember(GatewayRefund refund) {
        refunds.add(refund);
        GatewayRefund earlier = byKey.get(refund.idempotencyKey());
        if (earlier == null || expired(earlier, refund.createdAt())) {
            byKey.put(refund.idempotencyKey(), refund); // a key reused after it was forgotten names the new refund
        }
    }

    private FileOutputStream open(Path file) {
        try {
            if (Files.exists(file)) {
                load(file);
            }
            // A stream, not a FileChannel: an interrupted handler thread would close a channel mid-append.
            return new FileOutputStream(file.toFile(), true);
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the gateway ledger " + file + ": " + e.getMessage(), e);
        }
    }

    private void load(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        int start = 0;
        for (int number = 1; start < bytes.length; number++) {
            int newline = indexOf(bytes, NEWLINE, start);
            int end = newline < 0 ? bytes.length : newline;
            String line = new String(bytes, start, end - start, StandardCharsets.UTF_8);
            if (!line.isBlank()) {
                Optional<GatewayRefund> refund = parse(line);
                if (refund.isEmpty()) {
                    if (isBlank(bytes, end)) {
                        dropTornTail(file, start, bytes.length - start);
                        return;
                    }
                    throw new IllegalStateException("the gateway ledger " + file + " is corrupt at line " + number
                            + " (not a refund, and not the last line): " + shorten(line));
                }
                remember(refund.get());
                if (newline < 0) {
                    endWithNewline(file); // the crash came between the record and its newline
                }
            }
            start = end + 1;
        }
    }

    private static Optional<GatewayRefund> parse(String line) {
        try {
            return Optional.ofNullable(JSON.readValue(line, GatewayRefund.class)).filter(Ledger::complete);
        } catch (JsonProcessingException e) {
            return Optional.empty();
        }
    }

    private static boolean complete(GatewayRefund r) {
        return r.id() != null && r.idempotencyKey() != null && r.reference() != null && r.merchant() != null
                && r.amount() != null && r.currency() != null;
    }

    private static void dropTornTail(Path file, long keep, long dropped) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(keep);
            channel.force(true);
        }
        System.err.println("gateway: dropped a torn last line of the ledger " + file + " (" + dropped + " bytes)");
    }

    private static void endWithNewline(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            channel.write(ByteBuffer.wrap(new byte[] {NEWLINE}));
            channel.force(true);
        }
    }

    private void append(GatewayRefund refund) {
        if (out == null) {
            return;
        }
        try {
            byte[] json = JSON.writeValueAsBytes(refund);
            byte[] line = Arrays.copyOf(json, json.length + 1);
            line[json.length] = NEWLINE;
            out.write(line); // one write, so that a crash tears at most this line
            out.getFD().sync(); // durable before the caller hears "created"
        } catch (IOException e) {
            throw new UncheckedIOException("could not append to the gateway ledger: " + e.getMessage(), e);
        }
    }

    private static int indexOf(byte[] bytes, byte b, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isBlank(byte[] bytes, int from) {
        return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8).isBlank();
    }

    private static String shorten(String text) {
        return text.length() <= 80 ? text : text.substring(0, 80) + "...";
    }

    @Override
    public synchronized void close() {
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

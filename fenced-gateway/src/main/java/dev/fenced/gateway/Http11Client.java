package dev.fenced.gateway;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.UnknownHostException;
import java.net.StandardSocketOptions;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A small HTTP/1.1 client for plain {@code http} that makes each exchange on the calling thread, over a
 * pool of keep-alive connections: no executor, no selector thread, no hand-off between threads. The
 * JDK's {@code HttpClient} passes every call through its executor, its selector thread and
 * {@code CompletableFuture}'s pool and back, and those hand-offs were most of a settlement worker's
 * CPU per refund after the JIT's (BENCHMARKS.md, "CPU per refund").
 *
 * <p>What it promises, for {@link GatewayClient} to classify: a failure to connect (refused, no route,
 * unknown host, the name or the connection not there by the deadline, the client closed) is a
 * {@link ConnectException} or an {@link HttpConnectTimeoutException}, thrown only when not one byte of
 * the request was written; any failure after that is another {@link IOException}; the whole exchange,
 * the name's lookup and the connection included, ends by its deadline. A {@code GET} that meets a
 * kept-alive connection the server closed as it went out is sent once more, on a new connection; any
 * other request is never sent twice by this class. Each connection reads and writes through a direct
 * buffer of its own, so that the calling threads never take the JDK's per-thread temporary socket
 * buffers (about 4 KiB of heap each, on every thread that ever touched a socket). A pooled
 * connection the server closed meanwhile is seen before it is used (a non-blocking read that finds the
 * end of the stream) and replaced.
 *
 * <p>Answers may be delimited by {@code Content-Length}, by chunks, or by the server closing the
 * connection, up to 256 MiB; informational (1xx) answers are skipped; a server's {@code Keep-Alive:
 * timeout} shortens how long an idle connection is kept (4 s at most). Not supported: TLS (https
 * keeps the JDK's client), proxies, redirects, compression, {@code HEAD}, trailers (read and
 * dropped), pipelining. Thread-safe; a connection serves one exchange at a time.
 */
final class Http11Client implements AutoCloseable {
    /** One answer: the status, the header fields by lower-case name (repeated fields joined with ", "), the body. */
    record Response(int status, Map<String, String> headers, byte[] body) {
        Response {
            headers = Collections.unmodifiableMap(headers); // built per answer and handed over: no second copy
        }

        Optional<String> header(String name) {
            return Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
        }
    }

    private static final int BUFFER_BYTES = 16 * 1024;
    /** The most a head (the status line and the fields), or any one line of a chunked body's framing, may hold. */
    private static final int MAX_HEAD_BYTES = 64 * 1024;
    /** A merchant's whole ledger comes in one answer (about 250 bytes a refund): a million refunds fit. */
    private static final int MAX_BODY_BYTES = 256 * 1024 * 1024;
    /** Idle connections kept at most; more are closed when their exchange ends. */
    private static final int MAX_IDLE = 64;
    /**
     * A connection idle longer than this is closed rather than reused. Servers end idle connections on
     * their own schedule (the JDK's server after 30 s, Node's after 5 s); one ended while it is handed
     * out makes a call fail after its request was written, which for a create is an answer in doubt.
     */
    private static final long MAX_IDLE_NANOS = Duration.ofSeconds(4).toNanos();
    /** How long a looked-up address is used before the name is looked up again. */
    private static final long ADDRESS_NANOS = Duration.ofSeconds(30).toNanos();
    /**
     * Name lookups block for as long as the system's resolver takes: they run here, so that the caller
     * waits no longer than its deadline. Only when a connection is opened and the address is older
     * than {@link #ADDRESS_NANOS}; the threads end when idle.
     */
    private static final ExecutorService LOOKUPS = Executors.newCachedThreadPool(new java.util.concurrent.ThreadFactory() {
        private final AtomicInteger count = new AtomicInteger();

        @Override
        public Thread newThread(Runnable runnable) {
            Thread thread = new Thread(runnable, "gateway-name-lookup-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        }
    });

    private final String host;
    private final int port;
    private final String hostHeader;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;
    private volatile Address address;
    private final AtomicReference<CompletableFuture<InetSocketAddress>> lookingUp = new AtomicReference<>();

    private record Address(InetSocketAddress socket, long lookedUp) {
    }

    /** For {@code host} as {@link java.net.URI#getHost()} gives it (an IPv6 address in brackets) and {@code port}. */
    Http11Client(String host, int port) {
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("port " + port + " is out of range");
        }
        boolean bracketed = host.startsWith("[") && host.endsWith("]");
        this.host = bracketed ? host.substring(1, host.length() - 1) : host;
        this.port = port;
        this.hostHeader = (!bracketed && this.host.contains(":") ? "[" + this.host + "]" : host) + (port == 80 ? "" : ":" + port);
    }

    /**
     * One exchange: {@code method target} with {@code headers} and {@code body} (null for none), its
     * answer read whole, all by {@code deadline} ({@link System#nanoTime()}).
     *
     * @throws IllegalArgumentException for a header name or value that would break the request's framing
     */
    Response exchange(String method, String target, Map<String, String> headers, byte[] body, long deadline) throws IOException {
        byte[] request = request(method, target, headers, body);
        Connection connection = take(deadline);
        boolean reused = connection.used;
        try {
            return exchange(connection, request, deadline);
        } catch (IOException e) {
            if (!(method.equals("GET") && reused && connection.nothingRead) || e instanceof InterruptedIOException
                    || e instanceof HttpTimeoutException || e instanceof ConnectException) {
                throw e;
            }
            // The server ended a kept-alive connection as this read went out: once more, on a new connection. A failure
            // to connect or to start now is not "nothing was sent": the first request was.
            try {
                return exchange(Connection.open(address(deadline), deadline), request, deadline);
            } catch (ConnectException | HttpConnectTimeoutException notSent) {
                IOException failed = new IOException("the connection ended before the answer, and the request could not be sent again: "
                        + notSent, e);
                failed.addSuppressed(notSent);
                throw failed;
            }
        }
    }

    /** The exchange on {@code connection}, which goes back to the pool when its answer leaves it fit for another and is closed otherwise. */
    private Response exchange(Connection connection, byte[] request, long deadline) throws IOException {
        boolean pooled = false;
        try {
            connection.used = true;
            connection.nothingRead = true;
            connection.write(request, deadline);
            Response response = connection.read(deadline);
            if (connection.reusable && !closed && idle.size() < MAX_IDLE) {
                connection.idleSince = System.nanoTime();
                idle.offerFirst(connection);
                pooled = true;
                if (closed) { // closed meanwhile: nobody else will close what was just pooled
                    close();
                }
                closeExpired();
            }
            return response;
        } catch (RuntimeException e) {
            // after the request may have gone: whatever failed, the refund may exist
            throw new IOException("the exchange failed: " + e, e);
        } finally {
            if (!pooled) {
                connection.close();
            }
        }
    }

    private byte[] request(String method, String target, Map<String, String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(256).append(method).append(' ').append(target).append(" HTTP/1.1\r\nHost: ")
                .append(hostHeader).append("\r\nUser-Agent: fenced\r\n");
        headers.forEach((name, value) -> {
            if (!isToken(name) || !isFieldValue(value)) {
                throw new IllegalArgumentException("invalid HTTP header " + name);
            }
            head.append(name).append(": ").append(value).append("\r\n");
        });
        if (body != null) {
            head.append("Content-Length: ").append(body.length).append("\r\n");
        }
        byte[] headBytes = head.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        if (body == null || body.length == 0) {
            return headBytes;
        }
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        return all;
    }

    /** RFC 9110's token: a header name. */
    private static boolean isToken(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || "!#$%&'*+-.^_`|~".indexOf(c) >= 0)) {
                return false;
            }
        }
        return true;
    }

    /** Visible ASCII, spaces and tabs: no CR or LF that would end the field, nothing a server may read otherwise. */
    private static boolean isFieldValue(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!(c >= 0x20 && c <= 0x7e || c == '\t')) {
                return false;
            }
        }
        return true;
    }

    /** The most recently used idle connection that is still open and not too old, or a new one. */
    private Connection take(long deadline) throws IOException {
        Connection connection;
        while ((connection = idle.pollFirst()) != null) {
            if (System.nanoTime() - connection.idleSince < connection.maxIdleNanos && connection.stillOpen()) {
                closeExpired();
                return connection;
            }
            connection.close();
        }
        if (closed) {
            throw new ConnectException("the gateway client is closed");
        }
        return Connection.open(address(deadline), deadline);
    }

    /** Closes the connections left idle too long at the pool's far end: nothing else would, and each holds three descriptors. */
    private void closeExpired() {
        Connection oldest;
        while ((oldest = idle.peekLast()) != null && System.nanoTime() - oldest.idleSince >= oldest.maxIdleNanos) {
            if (idle.removeLastOccurrence(oldest)) {
                oldest.close();
            }
        }
    }

    /**
     * The host's address, looked up again once it is {@link #ADDRESS_NANOS} old, by the deadline. One
     * lookup at a time, shared by every caller that needs it; while it fails or is slow, the last
     * address found is used.
     */
    private InetSocketAddress address(long deadline) throws IOException {
        Address known = address;
        if (known != null && System.nanoTime() - known.lookedUp() < ADDRESS_NANOS) {
            return known.socket();
        }
        CompletableFuture<InetSocketAddress> started = new CompletableFuture<>();
        CompletableFuture<InetSocketAddress> lookup = lookingUp.compareAndExchange(null, started);
        if (lookup == null) {
            lookup = started;
            LOOKUPS.execute(() -> {
                try {
                    InetSocketAddress found = new InetSocketAddress(host, port);
                    if (found.isUnresolved()) {
                        throw new UnknownHostException(host);
                    }
                    address = new Address(found, System.nanoTime());
                    started.complete(found);
                } catch (Throwable e) {
                    started.completeExceptionally(e);
                } finally {
                    lookingUp.compareAndSet(started, null);
                }
            });
        }
        try {
            return lookup.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            if (known != null) {
                return known.socket();
            }
            throw new HttpConnectTimeoutException("the name " + host + " was not looked up by the deadline");
        } catch (ExecutionException e) {
            if (known != null) {
                return known.socket();
            }
            ConnectException failed = new ConnectException("could not look up " + host + ": " + e.getCause());
            failed.initCause(e.getCause());
            throw failed;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConnectException("interrupted looking up " + host);
        }
    }

    /** Closes the idle connections; one in use is closed when its exchange ends. */
    @Override
    public void close() {
        closed = true;
        Connection connection;
        while ((connection = idle.pollFirst()) != null) {
            connection.close();
        }
    }

    /** One socket, in non-blocking mode, waited on through a selector of its own with the exchange's deadline. */
    private static final class Connection {
        private final SocketChannel channel;
        private final Selector selector;
        private final SelectionKey key;
        /** Between two reads, holds the bytes received and not yet parsed (position to limit). */
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
        private long idleSince;
        /** {@link #MAX_IDLE_NANOS}, or less when the server said it keeps idle connections for less ({@code Keep-Alive: timeout}). */
        private long maxIdleNanos = MAX_IDLE_NANOS;
        private boolean used;
        private boolean reusable;
        private boolean nothingRead;
        private int lineBytes;

        private Connection(SocketChannel channel, Selector selector, SelectionKey key) {
            this.channel = channel;
            this.selector = selector;
            this.key = key;
        }

        /** A connection to {@code address}, or a {@link ConnectException} / {@link HttpConnectTimeoutException}: nothing is ever written here. */
        static Connection open(InetSocketAddress address, long deadline) throws IOException {
            SocketChannel channel = null;
            Selector selector = null;
            boolean opened = false;
            try {
                channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                selector = Selector.open();
                Connection connection = new Connection(channel, selector, channel.register(selector, 0));
                if (!channel.connect(address)) {
                    while (!channel.finishConnect()) {
                        if (!connection.await(SelectionKey.OP_CONNECT, deadline)) {
                            throw new HttpConnectTimeoutException("no connection to " + address + " by the deadline");
                        }
                    }
                }
                opened = true;
                return connection;
            } catch (HttpConnectTimeoutException | ConnectException e) {
                throw e;
            } catch (IOException | RuntimeException e) {
                ConnectException connect = new ConnectException("could not connect to " + address + ": " + e);
                connect.initCause(e);
                throw connect;
            } finally {
                if (!opened) {
                    closeQuietly(channel, selector);
                }
            }
        }

        /** Whether the server has not closed this idle connection (nor sent anything unasked). */
        boolean stillOpen() {
            try {
                buffer.clear();
                int read = channel.read(buffer);
                buffer.clear().flip();
                return read == 0;
            } catch (IOException e) {
                return false;
            }
        }

        void write(byte[] request, long deadline) throws IOException {
            // Nothing is sent that could not be waited for: a call whose time went on the lookup or the connection, or
            // whose thread is being stopped, fails as one that never reached the server.
            if (deadline - System.nanoTime() <= 0) {
                throw new HttpConnectTimeoutException("no time left to send the request");
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new ConnectException("interrupted before the request was sent");
            }
            int offset = 0;
            while (offset < request.length) {
                buffer.clear();
                int length = Math.min(buffer.remaining(), request.length - offset);
                buffer.put(request, offset, length).flip();
                offset += length;
                while (buffer.hasRemaining()) {
                    if (channel.write(buffer) == 0 && !await(SelectionKey.OP_WRITE, deadline)) {
                        throw new HttpTimeoutException("the request was not written by the deadline");
                    }
                }
            }
            buffer.clear().flip(); // empty: nothing received yet
        }

        Response read(long deadline) throws IOException {
            int status;
            Map<String, String> headers;
            lineBytes = 0; // the head as a whole is bounded, informational answers included
            do {
                String statusLine = line(deadline);
                status = status(statusLine);
                reusable = statusLine.startsWith("HTTP/1.1 ");
                headers = fields(deadline);
            } while (status >= 100 && status < 200);
            String encoding = headers.get("transfer-encoding");
            String length = headers.get("content-length");
            reusable &= !tokens(headers.getOrDefault("connection", "")).contains("close") && !(encoding != null && length != null);
            byte[] body;
            if (status == 204 || status == 304) {
                body = new byte[0];
            } else if (encoding != null) {
                List<String> codings = tokens(encoding);
                if (codings.isEmpty() || !codings.get(codings.size() - 1).equals("chunked")) {
                    body = untilClosed(deadline); // RFC 9112 6.3: the body ends with the connection
                    reusable = false;
                } else if (codings.size() > 1) {
                    throw new ProtocolException("a body coded " + encoding + ": only chunked is understood");
                } else {
                    body = chunked(deadline);
                }
            } else if (length != null) {
                body = exactly(contentLength(length), deadline);
            } else {
                body = untilClosed(deadline);
                reusable = false;
            }
            // bytes beyond the answer mean the framing was not what it seemed: such a connection is not used again
            reusable &= !buffer.hasRemaining();
            keepAlive(headers.get("keep-alive"));
            return new Response(status, headers, body);
        }

        /** A server's {@code Keep-Alive: timeout=N}: the connection is reused only well within those N seconds (one second less). */
        private void keepAlive(String field) {
            if (field == null) {
                return;
            }
            for (String parameter : tokens(field)) {
                if (parameter.startsWith("timeout=") && digits(parameter.substring("timeout=".length()), 10, 9)) {
                    long seconds = Long.parseLong(parameter.substring("timeout=".length()));
                    maxIdleNanos = Math.min(MAX_IDLE_NANOS, TimeUnit.SECONDS.toNanos(seconds - 1));
                    reusable &= maxIdleNanos > 0;
                }
            }
        }

        /** The status of {@code HTTP/1.x NNN[ reason]}, strictly: three digits, then the end or a space. */
        private static int status(String line) throws ProtocolException {
            if (!(line.startsWith("HTTP/1.1 ") || line.startsWith("HTTP/1.0 ")) || line.length() < 12 || line.length() > 12 && line.charAt(12) != ' ') {
                throw new ProtocolException("not an HTTP/1.x status line: " + abbreviate(line));
            }
            int status = 0;
            for (int i = 9; i < 12; i++) {
                char c = line.charAt(i);
                if (c < '0' || c > '9') {
                    throw new ProtocolException("no status in " + abbreviate(line));
                }
                status = status * 10 + (c - '0');
            }
            if (status < 100 || status == 101) {
                throw new ProtocolException("status " + status + " was not asked for");
            }
            return status;
        }

        private static long contentLength(String value) throws ProtocolException {
            List<String> values = tokens(value);
            if (values.isEmpty() || !values.stream().allMatch(values.get(0)::equals) || !digits(values.get(0), 10, 10)) {
                throw new ProtocolException("Content-Length " + abbreviate(value));
            }
            long length = Long.parseLong(values.get(0));
            if (length > MAX_BODY_BYTES) {
                throw new ProtocolException("Content-Length " + length + " is above " + MAX_BODY_BYTES);
            }
            return length;
        }

        /** Whether {@code text} is 1 to {@code most} digits of {@code radix}, and nothing else (no sign, no space). */
        private static boolean digits(String text, int radix, int most) {
            if (text.isEmpty() || text.length() > most) {
                return false;
            }
            for (int i = 0; i < text.length(); i++) {
                if (Character.digit(text.charAt(i), radix) < 0 || text.charAt(i) > 'f') {
                    return false;
                }
            }
            return true;
        }

        /** A field's comma-separated values, trimmed, in lower case, the empty ones left out. */
        private static List<String> tokens(String value) {
            List<String> tokens = new ArrayList<>(2);
            for (String token : value.split(",")) {
                String trimmed = token.trim().toLowerCase(Locale.ROOT);
                if (!trimmed.isEmpty()) {
                    tokens.add(trimmed);
                }
            }
            return tokens;
        }

        /** The fields up to the empty line; a field repeated is joined with ", " (RFC 9110 5.3). */
        private Map<String, String> fields(long deadline) throws IOException {
            Map<String, String> fields = new HashMap<>();
            String line;
            while (!(line = line(deadline)).isEmpty()) {
                int colon = line.indexOf(':');
                char first = line.charAt(0);
                if (colon <= 0 || first == ' ' || first == '\t' || line.charAt(colon - 1) == ' ' || line.charAt(colon - 1) == '\t') {
                    throw new ProtocolException("not a header field: " + abbreviate(line)); // a folded line, or a space before the colon
                }
                fields.merge(line.substring(0, colon).toLowerCase(Locale.ROOT), line.substring(colon + 1).trim(), (a, b) -> a + ", " + b);
            }
            return fields;
        }

        /** One line, without its CR LF; bounded, so that a server cannot make the client read for ever. */
        private String line(long deadline) throws IOException {
            StringBuilder line = new StringBuilder(64);
            while (true) {
                if (!buffer.hasRemaining()) {
                    fill(deadline);
                }
                byte b = buffer.get();
                if (++lineBytes > MAX_HEAD_BYTES) {
                    throw new ProtocolException("an answer's head, or a line of its chunks, longer than " + MAX_HEAD_BYTES + " bytes");
                }
                if (b == '\n') {
                    int end = line.length();
                    return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
                }
                line.append((char) (b & 0xff));
            }
        }

        private byte[] exactly(long length, long deadline) throws IOException {
            byte[] body = new byte[(int) length];
            int filled = 0;
            while (filled < body.length) {
                if (!buffer.hasRemaining()) {
                    fill(deadline);
                }
                int n = Math.min(buffer.remaining(), body.length - filled);
                buffer.get(body, filled, n);
                filled += n;
            }
            return body;
        }

        private byte[] chunked(long deadline) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            while (true) {
                lineBytes = 0;
                String sizeLine = line(deadline);
                int extension = sizeLine.indexOf(';');
                String hex = (extension < 0 ? sizeLine : sizeLine.substring(0, extension)).trim();
                if (!digits(hex, 16, 8)) {
                    throw new ProtocolException("not a chunk size: " + abbreviate(sizeLine));
                }
                long size = Long.parseLong(hex, 16);
                if (size > MAX_BODY_BYTES - body.size()) {
                    throw new ProtocolException("a chunked body longer than " + MAX_BODY_BYTES + " bytes");
                }
                if (size == 0) {
                    lineBytes = 0;
                    fields(deadline); // the trailer, dropped
                    return body.toByteArray();
                }
                body.writeBytes(exactly(size, deadline));
                lineBytes = 0;
                if (!line(deadline).isEmpty()) {
                    throw new ProtocolException("a chunk longer than its size");
                }
            }
        }

        private byte[] untilClosed(long deadline) throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            byte[] chunk = new byte[BUFFER_BYTES];
            while (true) {
                while (buffer.hasRemaining()) {
                    int n = Math.min(chunk.length, buffer.remaining());
                    buffer.get(chunk, 0, n);
                    body.write(chunk, 0, n);
                }
                if (body.size() > MAX_BODY_BYTES) {
                    throw new ProtocolException("a body longer than " + MAX_BODY_BYTES + " bytes");
                }
                try {
                    fill(deadline);
                } catch (EOFException end) {
                    return body.toByteArray();
                }
            }
        }

        /** Reads what has arrived into the buffer, waiting for it until the deadline; at least one byte, or EOF. */
        private void fill(long deadline) throws IOException {
            buffer.compact();
            try {
                int read;
                while ((read = channel.read(buffer)) == 0) {
                    if (!await(SelectionKey.OP_READ, deadline)) {
                        throw new HttpTimeoutException("no answer by the deadline");
                    }
                }
                if (read < 0) {
                    throw new EOFException("the server closed the connection");
                }
                nothingRead = false;
            } finally {
                buffer.flip();
            }
        }

        /** Waits until the channel is ready for {@code operation}; false when the deadline came first. */
        private boolean await(int operation, long deadline) throws IOException {
            key.interestOps(operation);
            try {
                while (true) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    if (Thread.currentThread().isInterrupted()) { // select would return at once, again and again
                        throw new InterruptedIOException("interrupted waiting for the server");
                    }
                    // rounded up: select(0) would wait for ever
                    if (selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999))) > 0) {
                        selector.selectedKeys().clear();
                        return true;
                    }
                }
            } finally {
                key.interestOps(0);
            }
        }

        void close() {
            closeQuietly(channel, selector);
        }

        private static void closeQuietly(SocketChannel channel, Selector selector) {
            try {
                if (selector != null) {
                    selector.close();
                }
            } catch (IOException ignored) {
                // closing anyway
            }
            try {
                if (channel != null) {
                    channel.close();
                }
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        private static String abbreviate(String text) {
            return text.length() <= 80 ? text : text.substring(0, 80) + "...";
        }
    }
}

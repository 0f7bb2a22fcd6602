package dev.fenced.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ProtocolException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link Http11Client} against real sockets: a server on loopback that reads each request and
 * answers what the test scripts, byte for byte, so that every way an answer may be framed is met.
 */
class Http11ClientTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** What the scripted server does with the n-th request of the n-th connection (both from 0). */
    @FunctionalInterface
    interface Script {
        void answer(int connection, int request, String head, Socket socket) throws IOException;
    }

    /** A server on loopback that accepts connections and runs the script for every request it reads. */
    static final class ScriptedServer implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final AtomicInteger connections = new AtomicInteger();
        final List<String> heads = new CopyOnWriteArrayList<>();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();

        ScriptedServer(Script script) throws IOException {
            Thread acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        Socket socket = server.accept();
                        socket.setTcpNoDelay(true); // an answer written byte by byte goes out byte by byte, without Nagle's waits
                        sockets.add(socket);
                        int connection = connections.getAndIncrement();
                        Thread handler = new Thread(() -> serve(socket, connection, script), "scripted-connection-" + connection);
                        handler.setDaemon(true);
                        handler.start();
                    } catch (IOException closed) {
                        return;
                    }
                }
            }, "scripted-server");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void serve(Socket socket, int connection, Script script) {
            try (socket) {
                InputStream in = socket.getInputStream();
                for (int request = 0; ; request++) {
                    String head = readHead(in);
                    if (head == null) {
                        return;
                    }
                    heads.add(head);
                    int length = contentLength(head);
                    in.readNBytes(length);
                    script.answer(connection, request, head, socket);
                    if (socket.isClosed()) {
                        return;
                    }
                }
            } catch (IOException gone) {
                // the client went away
            }
        }

        private static String readHead(InputStream in) throws IOException {
            ByteArrayOutputStream head = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                head.write(b);
                String text = head.toString(StandardCharsets.ISO_8859_1);
                if (text.endsWith("\r\n\r\n")) {
                    return text;
                }
            }
            return null;
        }

        private static int contentLength(String head) {
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                    return Integer.parseInt(line.substring("content-length:".length()).trim());
                }
            }
            return 0;
        }

        Http11Client client() {
            return new Http11Client("127.0.0.1", server.getLocalPort());
        }

        @Override
        public void close() throws IOException {
            server.close();
            for (Socket socket : sockets) {
                socket.close();
            }
        }
    }

    private static void write(Socket socket, String answer) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(answer.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    private static String ok(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    private static long deadline(Duration timeout) {
        return System.nanoTime() + timeout.toNanos();
    }

    private static String body(Http11Client.Response response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    @Test
    void keepsTheConnectionAliveAndSendsTheRequestAsWritten() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, ok("{\"n\":" + r + "}")));
             Http11Client client = server.client()) {
            for (int i = 0; i < 3; i++) {
                Http11Client.Response response = client.exchange("POST", "/refunds?x=1", Map.of("Idempotency-Key", "r_815"),
                        "{\"a\":1}".getBytes(StandardCharsets.UTF_8), deadline(TIMEOUT));
                assertThat(response.status()).isEqualTo(200);
                assertThat(body(response)).isEqualTo("{\"n\":" + i + "}");
                assertThat(response.header("content-type")).contains("application/json");
            }
            assertThat(server.connections.get()).as("one kept-alive connection for three calls").isEqualTo(1);
            assertThat(server.heads.get(0)).startsWith("POST /refunds?x=1 HTTP/1.1\r\nHost: 127.0.0.1:" + server.server.getLocalPort() + "\r\n")
                    .contains("Idempotency-Key: r_815\r\n").contains("Content-Length: 7\r\n");
        }
    }

    @Test
    void readsAChunkedAnswerWithExtensionsAndATrailer() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket,
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;note=x\r\n{\"a\"\r\n3\r\n:70\r\n1\r\n}\r\n0\r\nX-Trailer: y\r\n\r\n"));
             Http11Client client = server.client()) {
            assertThat(body(client.exchange("GET", "/ledger", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{\"a\":70}");
            assertThat(body(client.exchange("GET", "/ledger", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{\"a\":70}");
            assertThat(server.connections.get()).isEqualTo(1);
        }
    }

    @Test
    void readsAnAnswerWithoutLengthToTheEndAndDoesNotReuseItsConnection() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            write(socket, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"until\":\"closed\"}");
            socket.close();
        }); Http11Client client = server.client()) {
            assertThat(body(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{\"until\":\"closed\"}");
            assertThat(body(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{\"until\":\"closed\"}");
            assertThat(server.connections.get()).isEqualTo(2);
        }
    }

    @Test
    void skipsAnInformationalAnswerAndReadsOneSentByteByByte() throws Exception {
        String answer = "HTTP/1.1 100 Continue\r\n\r\n" + ok("{\"slow\":true}");
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            for (byte b : answer.getBytes(StandardCharsets.ISO_8859_1)) {
                socket.getOutputStream().write(b);
                socket.getOutputStream().flush();
            }
        }); Http11Client client = server.client()) {
            Http11Client.Response response = client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT));
            assertThat(response.status()).isEqualTo(200);
            assertThat(body(response)).isEqualTo("{\"slow\":true}");
        }
    }

    @Test
    void aKeptConnectionTheServerClosedIsReplacedBeforeItIsUsed() throws Exception {
        // The server answers, says nothing of closing, and closes: the next call, a create, must not be sent on that socket.
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            write(socket, ok("{}"));
            socket.close();
        }); Http11Client client = server.client()) {
            client.exchange("POST", "/refunds", Map.of(), new byte[0], deadline(TIMEOUT));
            awaitClosedByServer(server);
            Http11Client.Response second = client.exchange("POST", "/refunds", Map.of(), new byte[0], deadline(TIMEOUT));
            assertThat(second.status()).isEqualTo(200);
            assertThat(server.connections.get()).isEqualTo(2);
            assertThat(server.heads).hasSize(2);
        }
    }

    /** The server's close reaches the client's socket asynchronously: the test waits for the handler's thread to be done with it. */
    private static void awaitClosedByServer(ScriptedServer server) {
        org.awaitility.Awaitility.await("the server closed the first connection").atMost(TIMEOUT)
                .until(() -> server.sockets.stream().allMatch(Socket::isClosed));
    }

    @Test
    void anAnswerThatNeverComesEndsAtTheDeadlineAsATimeoutNotAsAFailureToConnect() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            // reads the request and answers nothing
        }); Http11Client client = server.client()) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of(), new byte[] {'{', '}'}, deadline(Duration.ofMillis(300))))
                    .isInstanceOf(HttpTimeoutException.class).isNotInstanceOf(HttpConnectTimeoutException.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            // the server's thread reads the request on its own schedule
            org.awaitility.Awaitility.await("the request reached the server").atMost(TIMEOUT).until(() -> server.heads.size() == 1);
        }
    }

    @Test
    void nothingListeningIsAFailureToConnect() throws Exception {
        int port;
        try (ServerSocket closed = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = closed.getLocalPort();
        }
        try (Http11Client client = new Http11Client("127.0.0.1", port)) {
            assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of(), new byte[0], deadline(TIMEOUT))).isInstanceOf(ConnectException.class);
        }
        Http11Client closed = new Http11Client("127.0.0.1", port);
        closed.close();
        assertThatThrownBy(() -> closed.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT))).isInstanceOf(ConnectException.class);
    }

    @Test
    void aHeaderThatWouldBreakTheFramingIsRefusedBeforeAnythingIsSent() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, ok("{}")));
             Http11Client client = server.client()) {
            assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of("Idempotency-Key", "r_1\r\nX-Evil: 1"), new byte[0],
                    deadline(TIMEOUT))).isInstanceOf(IllegalArgumentException.class);
            assertThat(server.connections.get()).isZero();
        }
    }

    @Test
    void aCreateOnAKeptConnectionThatEndsUnansweredFailsAfterTheWriteAndIsSentOnce() throws Exception {
        // The first request is answered and the connection kept; the second is read and the connection ended without an answer.
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            if (r == 0) {
                write(socket, ok("{}"));
            } else {
                socket.close();
            }
        }); Http11Client client = server.client()) {
            client.exchange("POST", "/refunds", Map.of(), new byte[] {'{', '}'}, deadline(TIMEOUT));
            assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of(), new byte[] {'{', '}'}, deadline(TIMEOUT)))
                    .isInstanceOf(IOException.class).isNotInstanceOf(ConnectException.class);
            assertThat(server.heads).as("the create was sent once, never again by the client").hasSize(2);
            assertThat(server.connections.get()).isEqualTo(1);
        }
    }

    @Test
    void aLookupOnAKeptConnectionThatEndsUnansweredIsSentOnceMoreOnANewOne() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> {
            if (c == 0 && r == 1) {
                socket.close();
            } else {
                write(socket, ok("{\"c\":" + c + "}"));
            }
        }); Http11Client client = server.client()) {
            client.exchange("GET", "/refunds?id=1", Map.of(), null, deadline(TIMEOUT));
            assertThat(body(client.exchange("GET", "/refunds?id=1", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{\"c\":1}");
            assertThat(server.heads).hasSize(3);
            assertThat(server.connections.get()).isEqualTo(2);
        }
    }

    @Test
    void readsHttp10AndAnswersWithoutAReasonOrABody() throws Exception {
        List<String> answers = List.of("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "HTTP/1.1 204\r\n\r\n",
                "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n");
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, answers.get(c + r)));
             Http11Client client = server.client()) {
            assertThat(body(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)))).isEqualTo("{}");
            assertThat(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)).status()).isEqualTo(204);
            assertThat(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)).status()).isEqualTo(404);
            assertThat(server.connections.get()).as("an HTTP/1.0 answer's connection is not kept").isEqualTo(2);
        }
    }

    @Test
    void aChunkedBodyOfManySmallChunksIsReadWhole() throws Exception {
        StringBuilder answer = new StringBuilder("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < 20_000; i++) {
            answer.append("1\r\nx\r\n");
        }
        answer.append("0\r\n\r\n");
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, answer.toString()));
             Http11Client client = server.client()) {
            assertThat(client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)).body()).hasSize(20_000);
        }
    }

    @Test
    void aServerThatKeepsIdleConnectionsBrieflyGetsANewOneEachTime() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket,
                "HTTP/1.1 200 OK\r\nKeep-Alive: timeout=1, max=100\r\nContent-Length: 2\r\n\r\n{}"));
             Http11Client client = server.client()) {
            client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT));
            client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT));
            assertThat(server.connections.get()).as("kept for timeout - 1 s: not at all").isEqualTo(2);
        }
    }

    @Test
    void aCallWithNoTimeLeftSendsNothingAndFailsAsNotConnected() throws Exception {
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, ok("{}")));
             Http11Client client = server.client()) {
            client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT)); // a kept connection: no connect to spend the time on
            assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of(), new byte[] {'{', '}'}, System.nanoTime() - 1))
                    .isInstanceOf(HttpConnectTimeoutException.class);
            Thread.currentThread().interrupt();
            try {
                assertThatThrownBy(() -> client.exchange("POST", "/refunds", Map.of(), new byte[] {'{', '}'}, deadline(TIMEOUT)))
                        .isInstanceOf(ConnectException.class);
            } finally {
                Thread.interrupted();
            }
            assertThat(server.heads).as("only the first request was sent").hasSize(1);
        }
    }

    @Test
    void aMalformedOrEndlessHeadIsAProtocolError() throws Exception {
        List<String> answers = List.of("SMTP ready\r\n\r\n", "HTTP/1.1 200 OK\r\nX-Long: " + "a".repeat(70_000) + "\r\n\r\n",
                "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+1\r\nx\r\n0\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n folded: x\r\n\r\n{}");
        try (ScriptedServer server = new ScriptedServer((c, r, head, socket) -> write(socket, answers.get(c)));
             Http11Client client = server.client()) {
            assertThatThrownBy(() -> client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT))).isInstanceOf(ProtocolException.class);
            assertThatThrownBy(() -> client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT))).isInstanceOf(ProtocolException.class)
                    .hasMessageContaining("longer than");
            for (String answer : answers.subList(2, answers.size())) {
                assertThatThrownBy(() -> client.exchange("GET", "/", Map.of(), null, deadline(TIMEOUT))).as(answer)
                        .isInstanceOf(ProtocolException.class);
            }
        }
    }
}

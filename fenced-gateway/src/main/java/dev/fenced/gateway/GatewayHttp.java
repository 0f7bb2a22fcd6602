package dev.fenced.gateway;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The JSON side of every exchange of {@link PaymentGateway}: a handler returns a {@link Response}
 * or throws an {@link HttpError}, and {@link #handle} writes either as JSON; every error answer is
 * {@code {"error": message}}, plus a {@code code} where a client must tell the cases apart.
 */
final class GatewayHttp {
    static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS) // a double would round the amount
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private GatewayHttp() {
    }

    record Response(int status, Object body, Map<String, String> headers) {
        Response(int status, Object body) {
            this(status, body, Map.of());
        }
    }

    interface Handler {
        Response handle() throws IOException;
    }

    /** A request the gateway refuses before doing anything: its status and message. */
    static final class HttpError extends RuntimeException {
        private final int status;

        HttpError(int status, String message) {
            super(message);
            this.status = status;
        }
    }

    static HttpError badRequest(String message) {
        return new HttpError(400, message);
    }

    /** The body of a definitive refusal: a client tells the cases apart by {@code code}. */
    static Map<String, Object> error(String code, String message) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", message);
        body.put("code", code);
        return body;
    }

    /** Error messages echo at most this much of what the client sent, however large it was. */
    static String shorten(String text) {
        return text.length() <= 24 ? text : text.substring(0, 24) + "...";
    }

    static void requireMethod(HttpExchange exchange, String method) {
        if (!exchange.getRequestMethod().equals(method)) {
            throw new HttpError(405, "use " + method);
        }
    }

    static void handle(HttpExchange exchange, Handler handler) throws IOException {
        Response response;
        try {
            response = handler.handle();
        } catch (HttpError e) {
            response = new Response(e.status, Map.of("error", e.getMessage()));
        } catch (RuntimeException e) {
            response = new Response(500, Map.of("error", String.valueOf(e.getMessage())));
        }
        byte[] bytes = JSON.writeValueAsBytes(response.body());
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        response.headers().forEach(exchange.getResponseHeaders()::set);
        try {
            exchange.sendResponseHeaders(response.status(), bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        } catch (IOException clientGone) {
            // the client timed out, or an outage cut the connection; what was created stays created
        } finally {
            exchange.close();
        }
    }
}

package dev.fenced.bench.work;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@link WorkerThreadsTest}'s control, run in a process of its own: the calls the gateway client
 * made before it used {@code HttpClient.send}, {@code sendAsync} on a client with an executor of
 * its own, then waiting for the answer. Arguments: the gateway's URL and the number of calls.
 */
public final class SendAsyncPerCall {
    private SendAsyncPerCall() {
    }

    public static void main(String[] args) throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(2);
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(executor).build();
            HttpRequest lookup = HttpRequest.newBuilder(URI.create(args[0] + "/refunds?reference=none")).GET().build();
            for (int call = Integer.parseInt(args[1]); call > 0; call--) {
                HttpResponse<byte[]> answer = http.sendAsync(lookup, HttpResponse.BodyHandlers.ofByteArray()).get();
                if (answer.statusCode() != 200) {
                    throw new IllegalStateException("the gateway answered " + answer.statusCode());
                }
            }
        } finally {
            executor.shutdownNow();
        }
    }
}

package dev.fenced.embedded;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code redis-server} on a loopback port, spoken to without a client library: one inline
 * command, its process id, a signal to its process. For the embedded servers' faults.
 */
final class RedisNode {
    private RedisNode() {
    }

    /** What to read of the answer to one inline command. */
    private interface Reply<T> {
        T read(BufferedReader in) throws IOException;
    }

    /** Sends one inline command ({@code AUTH} first when there is a password) and reads its answer. */
    private static <T> T exchange(int port, String password, String inline, Reply<T> reply) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            OutputStream out = socket.getOutputStream();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            if (password != null) {
                out.write(("AUTH " + password + "\r\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
                in.readLine();
            }
            out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            return reply.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException("could not send " + inline.split(" ")[0] + " to redis-server on port " + port, e);
        }
    }

    /** Sends one inline command and returns the first line of its answer. */
    static String command(int port, String inline) {
        return exchange(port, null, inline, BufferedReader::readLine);
    }

    /** Sends one inline command whose answer is an array of bulk strings (e.g. a Sentinel's {@code get-master-addr-by-name}). */
    static List<String> array(int port, String inline) {
        return exchange(port, null, inline, in -> {
            String header = in.readLine();
            if (header == null || !header.startsWith("*") || header.equals("*-1")) {
                throw new IllegalStateException("redis-server on port " + port + " answered " + header + " to " + inline.split(" ")[0]);
            }
            List<String> items = new ArrayList<>();
            for (int i = Integer.parseInt(header.substring(1)); i > 0; i--) {
                in.readLine(); // $length: the items are single lines
                items.add(in.readLine());
            }
            return items;
        });
    }

    /** A section of {@code INFO}, whole. */
    static String info(int port, String password, String section) {
        return exchange(port, password, "INFO " + section, in -> {
            String header = in.readLine();
            if (header == null || !header.startsWith("$")) {
                throw new IllegalStateException("redis-server on port " + port + " answered " + header + " to INFO");
            }
            char[] body = new char[Integer.parseInt(header.substring(1))];
            int read = 0;
            while (read < body.length) {
                int n = in.read(body, read, body.length - read);
                if (n < 0) {
                    break;
                }
                read += n;
            }
            return new String(body, 0, read);
        });
    }

    /** The port of a replica online with the primary on {@code primaryPort}, or -1 ({@code slaveN:ip=...,port=P,state=online} in INFO replication). */
    static int replicaOf(int primaryPort) {
        for (String line : info(primaryPort, null, "replication").split("\r?\n")) {
            if (line.startsWith("slave") && line.contains("state=online")) {
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (field.startsWith("port=")) {
                        return Integer.parseInt(field.substring(5));
                    }
                }
            }
        }
        return -1;
    }

    /** Whether the node on {@code port} answers and says it is a primary. */
    static boolean isPrimary(int port) {
        try {
            return info(port, null, "replication").contains("role:master");
        } catch (UncheckedIOException | IllegalStateException down) {
            return false;
        }
    }

    /**
     * Freezes the replica and has the primary drop its replication link; see
     * {@link ReplicatedRedis#laggingReplica}. Returns the frozen process id, or 0 (thawed again)
     * when the primary had no link to drop.
     */
    static long freezeBehind(int replicaPort, int primaryPort) {
        long pid = processId(replicaPort, null);
        signal("-STOP", pid);
        String killed = command(primaryPort, "CLIENT KILL TYPE replica");
        if (!":1".equals(killed)) {
            signal("-CONT", pid);
            return 0;
        }
        return pid;
    }

    /** The server's own answer: {@code process_id} from {@code INFO server}. */
    static long processId(int port, String password) {
        for (String line : info(port, password, "server").split("\r?\n")) {
            if (line.startsWith("process_id:")) {
                return Long.parseLong(line.substring("process_id:".length()).trim());
            }
        }
        throw new IllegalStateException("redis-server on port " + port + " did not report its process id");
    }

    static void signal(String signal, long pid) {
        try {
            Process kill = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill " + signal + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted signalling redis-server", e);
        }
    }
}

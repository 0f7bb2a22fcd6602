package dev.fenced.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One TCP proxy in front of each etcd member's peer port, so that a member can be cut off while it
 * runs: the only partition a test can make on one host without root. etcd's peers dial each
 * other both ways (a member reads its stream of messages from a connection it dialed to the
 * sender), so a connection is cut when it goes to the isolated member or was dialed by it; the
 * dialer is told by the {@code X-PeerURLs} header etcd sends on every peer request.
 */
final class PeerProxies implements AutoCloseable {
    private static final int MAX_HEADER = 16 * 1024;

    private final List<String> advertised;
    private final Set<Integer> isolated = ConcurrentHashMap.newKeySet();
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final List<ServerSocket> servers = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile boolean closed;

    PeerProxies(List<String> advertised) {
        this.advertised = advertised;
    }

    void start(int member, int port, int target) {
        try {
            ServerSocket server = new ServerSocket(port, 50, java.net.InetAddress.getLoopbackAddress());
            servers.add(server);
            Thread acceptor = new Thread(() -> accept(server, member, target), "etcd-peer-proxy-m" + member);
            acceptor.setDaemon(true);
            acceptor.start();
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the peer proxy of member " + member + " on port " + port, e);
        }
    }

    void isolate(int member) {
        isolated.add(member);
        for (Link link : links) {
            if (link.target == member || link.dialer == member) {
                link.close();
            }
        }
    }

    void heal(int member) {
        isolated.remove(member);
    }

    private boolean cut(int dialer, int target) {
        return isolated.contains(target) || (dialer >= 0 && isolated.contains(dialer));
    }

    private void accept(ServerSocket server, int member, int target) {
        while (!closed) {
            Socket in;
            try {
                in = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Thread connect = new Thread(() -> open(in, member, target), "etcd-peer-link-m" + member);
            connect.setDaemon(true);
            connect.start();
        }
    }

    private void open(Socket in, int member, int targetPort) {
        try {
            byte[] head = readHead(in.getInputStream());
            int dialer = dialerOf(new String(head, StandardCharsets.ISO_8859_1));
            if (closed || cut(dialer, member)) {
                in.close();
                return;
            }
            Socket out = new Socket(java.net.InetAddress.getLoopbackAddress(), targetPort);
            Link link = new Link(in, out, dialer, member);
            links.add(link);
            if (cut(dialer, member)) { // isolated while this one connected
                link.close();
                return;
            }
            out.getOutputStream().write(head);
            out.getOutputStream().flush();
            pump(link, out.getInputStream(), in.getOutputStream());
            pump(link, in.getInputStream(), out.getOutputStream());
        } catch (IOException e) {
            closeQuietly(in);
        }
    }

    /** The bytes up to the end of the first request's headers (or what came before the peer paused). */
    private static byte[] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (head.size() < MAX_HEADER) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == end.length) {
                break;
            }
        }
        return head.toByteArray();
    }

    private int dialerOf(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("x-peerurls:")) {
                String urls = line.substring("x-peerurls:".length()).trim();
                for (int i = 0; i < advertised.size(); i++) {
                    for (String url : urls.split(",")) {
                        if (url.trim().equals(advertised.get(i))) {
                            return i;
                        }
                    }
                }
            }
        }
        return -1; // a version check or another request that names no member: cut only by its target
    }

    private void pump(Link link, InputStream from, OutputStream to) {
        Thread pump = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try {
                int n;
                while ((n = from.read(buffer)) >= 0) {
                    to.write(buffer, 0, n);
                    to.flush();
                }
            } catch (IOException ended) {
                // closed by either side, or cut
            } finally {
                link.close();
            }
        }, "etcd-peer-pump-m" + link.target);
        pump.setDaemon(true);
        pump.start();
    }

    @Override
    public void close() {
        closed = true;
        servers.forEach(PeerProxies::closeQuietly);
        links.forEach(Link::close);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception ignored) {
            // closing
        }
    }

    private final class Link {
        final Socket in;
        final Socket out;
        final int dialer;
        final int target;

        Link(Socket in, Socket out, int dialer, int target) {
            this.in = in;
            this.out = out;
            this.dialer = dialer;
            this.target = target;
        }

        void close() {
            closeQuietly(in);
            closeQuietly(out);
            links.remove(this);
        }
    }
}

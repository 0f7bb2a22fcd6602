package dev.fenced.etcd;

import dev.fenced.internal.Redaction;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The endpoints a store was given: {@code http://[user:password@]host:port}, comma-separated,
 * checked up front so that a typo is an {@link IllegalArgumentException} naming the bad entry
 * instead of a client retrying a URL that can never work. The credentials of etcd's own auth may
 * stand in the user-info of any entry (one user for all); jetcd gets them apart from the URLs.
 */
record EtcdEndpoints(List<URI> uris, String user, String password, String described, Set<Redaction.Secret> secrets) {

    static EtcdEndpoints parse(String endpoints) {
        if (endpoints == null || endpoints.isBlank()) {
            throw new IllegalArgumentException("etcd endpoints must not be blank; give http://host:port[,http://host:port...]");
        }
        List<URI> uris = new ArrayList<>();
        List<String> described = new ArrayList<>();
        Set<Redaction.Secret> secrets = new LinkedHashSet<>();
        String user = null;
        String password = null;
        for (String raw : endpoints.split(",", -1)) {
            String entry = raw.strip();
            String shown = Redaction.describe(entry);
            secrets.addAll(Redaction.secretsOf(entry));
            if (entry.isEmpty()) {
                throw new IllegalArgumentException("etcd endpoints '" + Redaction.redactUri(endpoints) + "' hold an empty entry");
            }
            URI uri;
            try {
                uri = new URI(entry);
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("etcd endpoint " + shown + " is not a URL; give http://host:port");
            }
            if (!"http".equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException("etcd endpoint " + shown + " must start with http:// (TLS to etcd is not supported yet)");
            }
            if (uri.getHost() == null || uri.getPort() < 1) {
                throw new IllegalArgumentException("etcd endpoint " + shown + " needs a host and a port, as in http://127.0.0.1:2379");
            }
            if ((uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/")) || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                throw new IllegalArgumentException("etcd endpoint " + shown + " has a path, query or fragment; give http://host:port");
            }
            if (uri.getRawUserInfo() != null) {
                String[] parts = uri.getRawUserInfo().split(":", 2);
                if (parts.length != 2) {
                    throw new IllegalArgumentException("etcd endpoint " + shown + " names a user without a password; give user:password@");
                }
                String u = decode(parts[0]);
                String p = decode(parts[1]);
                if (user != null && (!user.equals(u) || !password.equals(p))) {
                    throw new IllegalArgumentException("etcd endpoints name two different users; one store logs in as one user");
                }
                user = u;
                password = p;
            }
            uris.add(URI.create("http://" + uri.getHost() + ":" + uri.getPort())); // without the user-info jetcd gets apart
            described.add(shown);
        }
        return new EtcdEndpoints(List.copyOf(uris), user, password, String.join(",", described), Set.copyOf(secrets));
    }

    /** Never the password. */
    @Override
    public String toString() {
        return "EtcdEndpoints[" + described + (user == null ? "" : ", user " + user) + "]";
    }

    private static String decode(String text) {
        return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}

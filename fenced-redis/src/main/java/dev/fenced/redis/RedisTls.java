package dev.fenced.redis;

import io.lettuce.core.SslOptions;
import io.lettuce.core.SslVerifyMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * TLS settings for a store on a {@code rediss://} URL: the certificates to trust (PEM), this
 * client's certificate and key (PEM, PKCS#8) when the server asks for one, and how much of the
 * server's certificate to verify. Files are checked when built and read when the store connects.
 *
 * <p>Without these settings a {@code rediss://} store trusts the JVM's default trust store and
 * verifies the host name. Immutable.
 */
public final class RedisTls {
    /** How much of the server's certificate is verified. */
    public enum Verify {
        /** The chain up to a trusted certificate, and the host name (the default). */
        FULL,
        /** The chain only: for servers reached under a name their certificate does not carry. */
        CA,
        /** Nothing: encrypted, but anyone in the middle can pose as the server. Tests only. */
        NONE
    }

    private final Path trustedCertificates;
    private final Path certificateChain;
    private final Path privateKey;
    private final Verify verify;

    private RedisTls(Builder b) {
        this.trustedCertificates = b.trustedCertificates;
        this.certificateChain = b.certificateChain;
        this.privateKey = b.privateKey;
        this.verify = b.verify;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The settings as a deployment gives them (a command line's options, a configuration's
     * properties), any of them absent: empty when none differs from the defaults (the JVM's trust
     * store, full verification), so that a plain {@code redis://} URL needs none.
     *
     * @param certificateSetting the name of the client certificate's setting, and {@code keySetting}
     *     of its key's, for the message when one is given without the other
     * @throws IllegalArgumentException for a certificate without its key or a key without its
     *     certificate, or a file that does not exist or cannot be read
     */
    public static Optional<RedisTls> fromSettings(Path trustedCertificates, Path certificateChain, Path privateKey, Verify verify,
                                                  String certificateSetting, String keySetting) {
        Objects.requireNonNull(verify, "verify");
        if (trustedCertificates == null && certificateChain == null && privateKey == null && verify == Verify.FULL) {
            return Optional.empty();
        }
        if ((certificateChain == null) != (privateKey == null)) {
            throw new IllegalArgumentException(certificateSetting + " and " + keySetting + " go together");
        }
        Builder tls = builder().verify(verify);
        if (trustedCertificates != null) {
            tls.trustedCertificates(trustedCertificates);
        }
        if (certificateChain != null) {
            tls.clientCertificate(certificateChain, privateKey);
        }
        return Optional.of(tls.build());
    }

    public Verify verify() {
        return verify;
    }

    SslVerifyMode verifyMode() {
        return switch (verify) {
            case FULL -> SslVerifyMode.FULL;
            case CA -> SslVerifyMode.CA;
            case NONE -> SslVerifyMode.NONE;
        };
    }

    SslOptions sslOptions() {
        SslOptions.Builder options = SslOptions.builder().jdkSslProvider();
        if (trustedCertificates != null) {
            options.trustManager(trustedCertificates.toFile());
        }
        if (certificateChain != null) {
            options.keyManager(certificateChain.toFile(), privateKey.toFile(), null);
        }
        return options.build();
    }

    @Override
    public String toString() {
        return "RedisTls[trust " + (trustedCertificates == null ? "the JVM's default" : trustedCertificates)
                + (certificateChain == null ? "" : ", client certificate " + certificateChain) + ", verify " + verify + "]";
    }

    /** Configures {@link RedisTls}; {@link #build()} checks that every file given is readable. */
    public static final class Builder {
        private Path trustedCertificates;
        private Path certificateChain;
        private Path privateKey;
        private Verify verify = Verify.FULL;

        private Builder() {
        }

        /** PEM certificates to trust (a CA, or the server's own); instead of the JVM's trust store. */
        public Builder trustedCertificates(Path pem) {
            this.trustedCertificates = Objects.requireNonNull(pem, "pem");
            return this;
        }

        /** This client's certificate chain and unencrypted PKCS#8 private key, both PEM, for servers with {@code tls-auth-clients yes}. */
        public Builder clientCertificate(Path certificateChainPem, Path privateKeyPem) {
            this.certificateChain = Objects.requireNonNull(certificateChainPem, "certificateChainPem");
            this.privateKey = Objects.requireNonNull(privateKeyPem, "privateKeyPem");
            return this;
        }

        public Builder verify(Verify verify) {
            this.verify = Objects.requireNonNull(verify, "verify");
            return this;
        }

        /** @throws IllegalArgumentException naming a file that does not exist or cannot be read */
        public RedisTls build() {
            requireReadable("trusted certificates", trustedCertificates);
            requireReadable("client certificate", certificateChain);
            requireReadable("client private key", privateKey);
            return new RedisTls(this);
        }

        private static void requireReadable(String what, Path file) {
            if (file != null && !(Files.isRegularFile(file) && Files.isReadable(file))) {
                throw new IllegalArgumentException("TLS " + what + " file " + file + " does not exist or cannot be read");
            }
        }
    }
}

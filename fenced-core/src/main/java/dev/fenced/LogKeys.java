package dev.fenced;

/**
 * The MDC keys under which the modules that log (through SLF4J) put what a log line is about, so
 * that a log pattern such as {@code %X{fenced.resource} %X{fenced.token}} shows them. The core
 * itself logs through the JDK's {@link System.Logger}, with the same facts in the message.
 */
public final class LogKeys {
    /** The resource a lease is for, e.g. {@code settle:m_4471}. */
    public static final String RESOURCE = "fenced.resource";
    /** The fencing token of the holder the line is about. */
    public static final String TOKEN = "fenced.token";
    /** The work row (e.g. the refund id) the line is about. */
    public static final String ROW = "fenced.row";

    private LogKeys() {
    }
}

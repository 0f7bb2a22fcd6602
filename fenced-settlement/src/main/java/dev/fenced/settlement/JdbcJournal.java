package dev.fenced.settlement;

import dev.fenced.jdbc.FencedTransactions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import javax.sql.DataSource;

/** {@link SettlementJournal} in {@code settlement_journal}, appended through {@link FencedTransactions}. */
final class JdbcJournal implements SettlementJournal {
    private static final String INSERT = "INSERT INTO " + JournalSchema.TABLE
            + " (merchant, refund_id, amount, currency, gateway_reference, token, written_by) VALUES (?, ?, ?, ?, ?, ?, ?)";
    private static final String REFUND_IDS = "SELECT refund_id FROM " + JournalSchema.TABLE + " WHERE merchant = ?";
    private static final String LINES = "SELECT id, merchant, refund_id, amount, currency, gateway_reference, token, written_by FROM "
            + JournalSchema.TABLE + " WHERE merchant = ? ORDER BY id";

    private final DataSource dataSource;
    private final FencedTransactions fences = FencedTransactions.create();

    JdbcJournal(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    @Override
    public List<JournalLine> appendMissing(String resource, String merchant, long token, List<JournalLine> candidates, Runnable beforeAppend) {
        // READ COMMITTED: a newer holder that waited for an older one's append must see its lines.
        return fences.inTransaction(dataSource, Connection.TRANSACTION_READ_COMMITTED, resource, token, connection -> {
            List<JournalLine> missing = missing(connection, merchant, token, candidates);
            beforeAppend.run();
            append(connection, missing);
            return missing;
        });
    }

    /** The candidates without a line, as lines written by {@code token}. */
    private static List<JournalLine> missing(Connection connection, String merchant, long token, List<JournalLine> candidates) throws SQLException {
        Set<String> present = new HashSet<>();
        try (PreparedStatement s = connection.prepareStatement(REFUND_IDS)) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    present.add(rs.getString(1));
                }
            }
        }
        List<JournalLine> missing = new ArrayList<>();
        for (JournalLine line : candidates) {
            if (!present.contains(line.refundId())) {
                missing.add(new JournalLine(0, line.merchant(), line.refundId(), line.amount(), line.currency(), line.gatewayReference(),
                        line.token(), token));
            }
        }
        return missing;
    }

    private static void append(Connection connection, List<JournalLine> lines) throws SQLException {
        if (lines.isEmpty()) {
            return;
        }
        try (PreparedStatement insert = connection.prepareStatement(INSERT)) {
            for (JournalLine line : lines) {
                insert.setString(1, line.merchant());
                insert.setString(2, line.refundId());
                insert.setBigDecimal(3, line.amount());
                insert.setString(4, line.currency());
                insert.setString(5, line.gatewayReference());
                insert.setLong(6, line.token());
                insert.setLong(7, line.writtenBy());
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    @Override
    public List<JournalLine> lines(String merchant) {
        try (Connection connection = dataSource.getConnection(); PreparedStatement s = connection.prepareStatement(LINES)) {
            s.setString(1, merchant);
            List<JournalLine> lines = new ArrayList<>();
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    lines.add(new JournalLine(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getBigDecimal(4), rs.getString(5),
                            rs.getString(6), rs.getLong(7), rs.getLong(8)));
                }
            }
            return lines;
        } catch (SQLException e) {
            throw new dev.fenced.StoreUnavailableException("could not read the journal of " + merchant + ": " + e.getMessage(), e);
        }
    }
}

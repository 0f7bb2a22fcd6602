package dev.fenced.lab;

import com.stripe.StripeClient;
import com.stripe.exception.StripeException;
import com.stripe.param.ChargeCreateParams;
import dev.fenced.cli.UsageException;
import dev.fenced.provider.StripeMinorUnits;
import dev.fenced.stripe.ChargeResolver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The customer payments the demo's refunds give back, as Stripe charges: one per refund row, made
 * through Stripe's official library on the simulated gateway's Stripe surface, and the row-to-charge
 * map the workers' {@link ChargeResolver} reads, kept in a file ({@code refund_id,charge_id} lines)
 * as an application keeps it in its orders. Every charge is paid with {@code tok_visa} except the
 * one refund's named to fail after it succeeded, paid with Stripe's {@code tok_refundFail}.
 */
final class StripeCharges {
    /** The demo's own key for the simulated Stripe surface; never a real one. */
    static final String API_KEY = "sk_test_fenced_demo_4471";
    /** Where the workers read {@link #API_KEY}: keys stay off command lines. */
    static final String API_KEY_VARIABLE = "FENCED_STRIPE_API_KEY";
    static final String REFUND_FAIL_CARD = "tok_refundFail";

    private StripeCharges() {
    }

    /** Makes a charge for every row of {@code merchant}, of the row's amount, and writes the map to {@code file}. */
    static Map<String, String> create(String apiBase, DataSource db, String merchant, String failsAfterSuccess, Path file) {
        StripeClient client = StripeClient.builder().setApiKey(API_KEY).setApiBase(apiBase).setMaxNetworkRetries(2).build();
        Map<String, String> charges = new LinkedHashMap<>();
        List<String> lines = new ArrayList<>();
        for (Map.Entry<String, Row> row : rows(db, merchant).entrySet()) {
            Row refund = row.getValue();
            ChargeCreateParams params = ChargeCreateParams.builder().setAmount(StripeMinorUnits.toStripe(refund.amount(), refund.currency()))
                    .setCurrency(refund.currency().toLowerCase(Locale.ROOT))
                    .setSource(row.getKey().equals(failsAfterSuccess) ? REFUND_FAIL_CARD : "tok_visa")
                    .putMetadata("merchant", merchant).putMetadata("order", row.getKey()).build();
            try {
                String charge = client.charges().create(params).getId();
                charges.put(row.getKey(), charge);
                lines.add(row.getKey() + "," + charge);
            } catch (StripeException e) {
                throw new IllegalStateException("the charge for " + row.getKey() + " could not be made: " + e.getMessage(), e);
            }
        }
        try {
            Files.write(file, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the charges to " + file + ": " + e.getMessage(), e);
        }
        return charges;
    }

    /** The map {@link #create} wrote, as the resolver a worker pays with; a row it does not name has no charge to refund. */
    static ChargeResolver resolver(Path file) {
        Map<String, String> charges = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                int comma = line.indexOf(',');
                if (comma <= 0 || comma == line.length() - 1) {
                    throw new UsageException("--stripe-charges: " + file + " has a line that is not refund_id,charge_id");
                }
                charges.put(line.substring(0, comma), line.substring(comma + 1));
            }
        } catch (IOException e) {
            throw new UsageException("--stripe-charges: cannot read " + file + ": " + e.getMessage());
        }
        Map<String, String> fixed = Map.copyOf(charges);
        return (merchant, reference) -> {
            String charge = fixed.get(reference);
            if (charge == null) {
                throw new IllegalStateException("no charge for refund " + reference + " of " + merchant + " in the charges file");
            }
            return charge;
        };
    }

    private record Row(BigDecimal amount, String currency) {
    }

    private static Map<String, Row> rows(DataSource db, String merchant) {
        Map<String, Row> rows = new LinkedHashMap<>();
        try (Connection c = db.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT id, amount, currency FROM refund WHERE merchant = ? ORDER BY seq")) {
            s.setString(1, merchant);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    rows.put(rs.getString(1), new Row(rs.getBigDecimal(2), rs.getString(3)));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("reading the refunds of " + merchant + " failed: " + e.getMessage(), e);
        }
        return rows;
    }
}

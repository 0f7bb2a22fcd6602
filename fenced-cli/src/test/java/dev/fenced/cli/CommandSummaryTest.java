package dev.fenced.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code fenced --help} lists every command with one whole sentence: a summary cut mid-sentence
 * ("take settlement jobs from the JetStream stream") told the reader half of what a command does.
 * Checked at 80 and 120 columns, the widths of a plain and a wide terminal; the lab's commands are
 * checked by the lab's tests through {@link #checkEverySummary()}.
 */
public class CommandSummaryTest {
    @Test
    void everyListedCommandIsSummedUpInOneCompleteSentence() {
        assertThat(checkEverySummary()).contains("settle", "worker", "enqueue", "status", "timeline");
    }

    /**
     * Renders {@code fenced --help} with every {@link CommandSet} on the class path at 80 and 120
     * columns and checks each listed command's summary: the whole first sentence of its description,
     * ending with a period, no line wider than the terminal. Returns the commands listed.
     */
    public static List<String> checkEverySummary() {
        List<String> listed = null;
        for (int width : new int[] {80, 120}) {
            CommandLine cli = new CommandLine(new FencedCli());
            for (CommandSet set : ServiceLoader.load(CommandSet.class)) {
                set.commands().forEach(cli::addSubcommand);
            }
            cli.setUsageHelpWidth(width);
            String usage = cli.getUsageMessage(CommandLine.Help.Ansi.OFF);
            assertThat(usage.lines()).as("usage at " + width + " columns").allSatisfy(line -> assertThat(line.length()).isLessThanOrEqualTo(width));
            Map<String, String> summaries = summaries(usage);
            cli.getSubcommands().forEach((name, command) -> {
                if (command.getCommandSpec().usageMessage().hidden()) {
                    assertThat(summaries).doesNotContainKey(name);
                    return;
                }
                String first = command.getCommandSpec().usageMessage().description()[0];
                assertThat(summaries.get(name)).as(name + "'s summary at " + width + " columns").isEqualTo(first)
                        .matches("[A-Z].*\\.").doesNotContainPattern("[.;:] [A-Z]");
            });
            listed = List.copyOf(summaries.keySet());
        }
        return listed;
    }

    /** The "Commands:" section: each command's name and its summary, its wrapped lines joined. */
    private static Map<String, String> summaries(String usage) {
        Map<String, String> summaries = new LinkedHashMap<>();
        String current = null;
        boolean inCommands = false;
        for (String line : usage.lines().toList()) {
            if (line.equals("Commands:")) {
                inCommands = true;
            } else if (inCommands && line.matches("  \\S.*")) {
                String[] parts = line.trim().split("\\s+", 2);
                current = parts[0];
                summaries.put(current, parts.length > 1 ? parts[1] : "");
            } else if (inCommands && current != null && line.startsWith("   ")) {
                summaries.merge(current, " " + line.trim(), String::concat);
            }
        }
        return summaries;
    }
}

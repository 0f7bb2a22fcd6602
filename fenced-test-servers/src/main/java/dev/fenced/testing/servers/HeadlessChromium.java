package dev.fenced.testing.servers;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's Chromium, headless, for tests of the HTML pages fenced writes: the DOM as the browser
 * built it, and screenshots at a given window size. Without {@code /usr/bin/chromium} the test is
 * skipped, except when {@code FENCED_REQUIRE_CHROMIUM} is set (CI installs it), where it fails.
 */
public final class HeadlessChromium {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private final Path profile;

    private HeadlessChromium(Path profile) {
        this.profile = profile;
    }

    /** A browser with its profile in {@code workDir}; skips the calling test when there is none and CI does not require one. */
    public static HeadlessChromium in(Path workDir) {
        if (System.getenv("FENCED_REQUIRE_CHROMIUM") == null) {
            Assumptions.assumeTrue(Files.isExecutable(CHROMIUM), "no /usr/bin/chromium to render the page");
        } else if (!Files.isExecutable(CHROMIUM)) {
            throw new IllegalStateException("FENCED_REQUIRE_CHROMIUM is set but there is no " + CHROMIUM);
        }
        return new HeadlessChromium(workDir.resolve("chromium-profile"));
    }

    /** The page's DOM after Chromium loaded it ({@code --dump-dom}), parsed. */
    public Document dom(Path page) {
        String html = run(List.of("--dump-dom", page.toUri().toString()));
        return Jsoup.parse(html, page.toUri().toString());
    }

    /** A screenshot of the page's top {@code width} x {@code height} pixels, written to {@code png} and read back. */
    public BufferedImage screenshot(Path page, Path png, int width, int height) {
        run(List.of("--window-size=" + width + "," + height, "--hide-scrollbars", "--screenshot=" + png.toAbsolutePath(),
                page.toUri().toString()));
        try {
            BufferedImage image = ImageIO.read(png.toFile());
            if (image == null) {
                throw new IllegalStateException("Chromium wrote no image to " + png);
            }
            return image;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Pixels (every other row and column) whose colour is far from grey: bars and marks, not text. */
    public static int colouredPixels(BufferedImage image, int fromX, int toX) {
        int coloured = 0;
        for (int y = 0; y < image.getHeight(); y += 2) {
            for (int x = fromX; x < Math.min(toX, image.getWidth()); x += 2) {
                int rgb = image.getRGB(x, y);
                int r = (rgb >> 16) & 0xff;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    coloured++;
                }
            }
        }
        return coloured;
    }

    private String run(List<String> arguments) {
        List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + profile));
        command.addAll(arguments);
        try {
            Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            Thread reader = new Thread(() -> {
                try {
                    process.getInputStream().transferTo(out);
                } catch (IOException ignored) {
                    // the process ended; what it wrote is in out
                }
            });
            reader.start();
            if (!process.waitFor(90, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("Chromium did not finish in 90 s: " + command);
            }
            reader.join();
            if (process.exitValue() != 0) {
                throw new IllegalStateException("Chromium exited with " + process.exitValue() + ": " + command);
            }
            return out.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}

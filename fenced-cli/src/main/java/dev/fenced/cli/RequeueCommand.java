package dev.fenced.cli;

import dev.fenced.fleet.JobStream;
import dev.fenced.fleet.SettlementJobs;
import io.nats.client.Connection;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "requeue", mixinStandardHelpOptions = true,
        description = {"Send every dead-lettered settlement job back to the fleet's job stream.",
                "Each goes back as a new job of its merchant and leaves the dead letters (<stream>_DEAD). A dead letter that names"
                        + " no merchant is left there."})
final class RequeueCommand implements Callable<Integer> {
    @Mixin
    NatsOptions nats;

    @Override
    public Integer call() throws InterruptedException {
        nats.checkUrl();
        JobStream stream = nats.streamBuilder().build();
        try (Connection broker = nats.connect("fenced-requeue")) {
            SettlementJobs.Requeued requeued = SettlementJobs.on(broker, stream).requeueDeadLetters();
            int jobs = requeued.jobs().size();
            System.out.println("requeued " + jobs + " dead-lettered job" + (jobs == 1 ? "" : "s") + " from " + stream.deadStream()
                    + " to " + stream.stream());
            if (requeued.leftNotMerchants() > 0) {
                System.out.println("left " + requeued.leftNotMerchants() + " dead letter" + (requeued.leftNotMerchants() == 1 ? "" : "s")
                        + " that name no merchant in " + stream.deadStream());
            }
        }
        return 0;
    }
}

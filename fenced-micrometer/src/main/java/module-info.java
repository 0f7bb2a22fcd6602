/** fenced's decisions as Micrometer meters; the settlement worker's own meters live in fenced-settlement. */
module dev.fenced.micrometer {
    requires transitive dev.fenced.core;
    requires transitive micrometer.core;

    exports dev.fenced.micrometer;
}

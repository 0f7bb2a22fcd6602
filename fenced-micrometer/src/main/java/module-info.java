/** fenced's decisions as Micrometer meters and observations; the settlement worker's own meters live in fenced-settlement. */
module dev.fenced.micrometer {
    requires transitive dev.fenced.core;
    requires transitive micrometer.core;
    requires transitive micrometer.observation;
    requires micrometer.commons;

    exports dev.fenced.micrometer;
}

/** fenced's decisions as Micrometer meters; the settlement worker's meters only when fenced-settlement is present. */
module dev.fenced.micrometer {
    requires transitive dev.fenced.core;
    requires transitive micrometer.core;
    requires static dev.fenced.settlement;

    exports dev.fenced.micrometer;
}

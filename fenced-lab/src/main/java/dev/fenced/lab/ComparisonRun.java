package dev.fenced.lab;

import com.fasterxml.jackson.annotation.JsonUnwrapped;

/** One run of the comparison: the worked example's report under one mechanism, numbered; flat in JSON, the number last. */
record ComparisonRun(@JsonUnwrapped DemoReport report, int run) {
}

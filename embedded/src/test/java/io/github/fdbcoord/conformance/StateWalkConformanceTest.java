package io.github.fdbcoord.conformance;

import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * No future of a transaction stays incomplete because of the transaction's state: every method
 * through every state ({@link StateWalk}), each future with a deadline. That both engines give the
 * same outcomes is checked in {@link DifferentialConformanceTest}.
 */
@ExtendWith(EngineExtension.class)
class StateWalkConformanceTest {
  @TestTemplate
  void everyFutureCompletesInEveryState(Fixture f) {
    f.put("k", "v");
    Map<String, String> outcomes = new StateWalk(f.db(), f.prefix()).walk();
    String pending = outcomes.entrySet().stream()
        .filter(e -> e.getValue().equals(StateWalk.PENDING))
        .map(Map.Entry::getKey)
        .collect(Collectors.joining(", "));
    assertEquals("", pending, "futures still incomplete after " + StateWalk.DEADLINE_SECONDS + " s");
    // The table, for the record in the test output (docs/embedded-conformance.md summarises it).
    outcomes.forEach((pair, outcome) -> System.out.println("[" + f.engine() + "] " + pair + " -> " + outcome));
  }
}

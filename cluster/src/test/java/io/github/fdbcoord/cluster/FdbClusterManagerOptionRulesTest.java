package io.github.fdbcoord.cluster;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cluster manager's options: their JSON form, and the bad ones refused with a message naming what is wrong. */
class FdbClusterManagerOptionRulesTest {
  private static FdbClusterManagerOptions fromJson() {
    return new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("engine", "embedded").put("dataDirectory", "/tmp/x"))
        .put("directory", new JsonArray().add("a").add("b"))
        .put("nodeLeaseMs", 4000).put("heartbeatIntervalMs", 500).put("reaperIntervalMs", 250)
        .put("logRetentionMs", 20000));
  }

  @Test
  void jsonOptionsAreReadIntoTheirTypes() {
    FdbClusterManagerOptions o = fromJson();
    assertEquals(List.of("a", "b"), o.directory());
    assertEquals(Duration.ofSeconds(4), o.nodeLease());
  }

  @Test
  void optionsRoundTripThroughJson() {
    FdbClusterManagerOptions o = fromJson();
    assertEquals(o.toJson(), new FdbClusterManagerOptions(o.toJson()).toJson());
    assertEquals("cluster", new FdbClusterManagerOptions(new JsonObject().put("store", new JsonObject().put("engine", "cluster")))
        .toJson().getJsonObject("store").getString("engine"));
  }

  @Test
  void anUnknownOptionIsRefusedByName() {
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
        () -> new FdbClusterManagerOptions(new JsonObject().put("nodeLease", 5)));
    assertTrue(unknown.getMessage().contains("nodeLease"), unknown.getMessage());
  }

  @Test
  void anUnknownStoreIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("engine", "zookeeper"))));
  }

  @Test
  void aDurationThatIsNotANumberIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject().put("nodeLeaseMs", "ten")));
  }

  @Test
  void aHeartbeatIntervalAsLongAsTheLeaseIsRefused() {
    IllegalArgumentException hb = assertThrows(IllegalArgumentException.class, () ->
        FdbClusterManagerOptions.builder().nodeLease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(1)).build());
    assertTrue(hb.getMessage().contains("heartbeatInterval"), hb.getMessage());
  }

  @Test
  void aZeroLeaseIsRefused() {
    IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
        () -> FdbClusterManagerOptions.builder().nodeLease(Duration.ZERO));
    assertTrue(zero.getMessage().contains("nodeLease must be positive"), zero.getMessage());
  }

  @Test
  void aNegativeIntervalIsRefused() {
    IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
        () -> new FdbClusterManagerOptions(new JsonObject().put("reaperIntervalMs", -1)));
    assertTrue(negative.getMessage().contains("reaperIntervalMs") && negative.getMessage().contains("> 0"), negative.getMessage());
  }

  @Test
  void aLogRetentionUnderTwiceTheLeaseIsRefused() {
    IllegalArgumentException retention = assertThrows(IllegalArgumentException.class,
        () -> new FdbClusterManagerOptions(new JsonObject().put("nodeLeaseMs", 10000).put("logRetentionMs", 15000)));
    assertTrue(retention.getMessage().contains("logRetention") && retention.getMessage().contains("twice nodeLease"), retention.getMessage());
  }

  @Test
  void anEmptyDirectoryIsRefused() {
    IllegalArgumentException emptyDir = assertThrows(IllegalArgumentException.class,
        () -> new FdbClusterManagerOptions(new JsonObject().put("directory", new JsonArray())));
    assertTrue(emptyDir.getMessage().contains("directory must not be empty"), emptyDir.getMessage());
  }

  @Test
  void aBuilderFromOptionsChangesACopy() {
    FdbClusterManagerOptions o = fromJson();
    FdbClusterManagerOptions changed = o.toBuilder().nodeLease(Duration.ofSeconds(5)).build();
    assertEquals(Duration.ofSeconds(4), o.nodeLease(), "options are immutable: a builder from them changes a copy");
    assertEquals(Duration.ofSeconds(5), changed.nodeLease());
  }
}

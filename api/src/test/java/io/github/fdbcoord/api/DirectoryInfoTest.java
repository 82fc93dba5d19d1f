package io.github.fdbcoord.api;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectoryInfoTest {
  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void valueEqualityOverPathLayerAndPrefix() {
    DirectoryInfo a = new DirectoryInfo(List.of("a", "b"), utf8("docs"), new byte[] {1, 2});
    assertEquals(a, new DirectoryInfo(List.of("a", "b"), utf8("docs"), new byte[] {1, 2}));
    assertEquals(a.hashCode(), new DirectoryInfo(List.of("a", "b"), utf8("docs"), new byte[] {1, 2}).hashCode());
    assertNotEquals(a, new DirectoryInfo(List.of("a"), utf8("docs"), new byte[] {1, 2}));
    assertNotEquals(a, new DirectoryInfo(List.of("a", "b"), utf8("x"), new byte[] {1, 2}));
    assertNotEquals(a, new DirectoryInfo(List.of("a", "b"), utf8("docs"), new byte[] {1, 3}));
    assertEquals("DirectoryInfo{path=/a/b, layer='docs', prefix=0102}", a.toString());
  }

  @Test
  void copiesInAndOut() {
    List<String> path = new ArrayList<>(List.of("a"));
    byte[] layer = utf8("l");
    byte[] prefix = {7};
    DirectoryInfo info = new DirectoryInfo(path, layer, prefix);
    path.add("b");
    layer[0] = 'x';
    prefix[0] = 8;
    info.prefix()[0] = 9;
    info.layerBytes()[0] = 'y';
    assertEquals(List.of("a"), info.path());
    assertEquals("l", info.layer());
    assertArrayEquals(new byte[] {7}, info.prefix());
    assertThrows(UnsupportedOperationException.class, () -> info.path().add("c"));
  }

  @Test
  void aPartitionHasNoKeyPrefix() {
    DirectoryInfo plain = new DirectoryInfo(List.of("d"), new byte[0], new byte[] {0x15});
    assertFalse(plain.isPartition());
    assertEquals("", plain.layer());
    assertArrayEquals(new byte[] {0x15}, plain.keyPrefix());
    DirectoryInfo partition = new DirectoryInfo(List.of("p"), utf8(DirectoryInfo.PARTITION_LAYER), new byte[] {(byte) 0xfe});
    assertTrue(partition.isPartition());
    assertEquals("fe", partition.prefixHex());
    IllegalStateException e = assertThrows(IllegalStateException.class, partition::keyPrefix);
    assertTrue(e.getMessage().contains("/p"), e.getMessage());
  }

  @Test
  void jsonMap() {
    DirectoryInfo info = new DirectoryInfo(List.of("a"), utf8("docs"), new byte[] {0x0a});
    assertEquals(Map.of("path", List.of("a"), "layer", "docs", "prefix", "0a", "partition", false), info.toJsonMap());
    assertEquals(List.of("path", "layer", "prefix", "partition"), new ArrayList<>(info.toJsonMap().keySet()));
  }

  @Test
  void refusesNulls() {
    assertThrows(NullPointerException.class, () -> new DirectoryInfo(null, new byte[0], new byte[0]));
    assertThrows(NullPointerException.class, () -> new DirectoryInfo(List.of(), null, new byte[0]));
    assertThrows(NullPointerException.class, () -> new DirectoryInfo(List.of(), new byte[0], null));
  }

  @Test
  void pagesCarryTheirContinuation() {
    DirectoryPage more = new DirectoryPage(List.of("a", "b"), true);
    assertEquals("b", more.nextStartAfter());
    assertEquals(Map.of("names", List.of("a", "b"), "hasMore", true, "nextStartAfter", "b"), more.toJsonMap());
    DirectoryPage last = new DirectoryPage(List.of("c"), false);
    assertNull(last.nextStartAfter());
    assertFalse(last.toJsonMap().containsKey("nextStartAfter"));
    assertEquals(more, new DirectoryPage(new ArrayList<>(List.of("a", "b")), true));
    assertEquals(more.hashCode(), new DirectoryPage(List.of("a", "b"), true).hashCode());
    assertNotEquals(more, new DirectoryPage(List.of("a", "b"), false));
    assertEquals("DirectoryPage{names=[c], hasMore=false}", last.toString());
    List<String> names = new ArrayList<>(List.of("x"));
    DirectoryPage copied = new DirectoryPage(names, false);
    names.add("y");
    assertEquals(List.of("x"), copied.names());
  }
}

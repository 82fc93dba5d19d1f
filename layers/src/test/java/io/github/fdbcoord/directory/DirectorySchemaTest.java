package io.github.fdbcoord.directory;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectorySchemaTest {
  private final Subspace metadata = new Subspace(Tuple.from("schema", "meta"));
  private final DirectorySchema schema = new DirectorySchema(DirectoryLayer.getDefault(), metadata);

  @Test
  void versionKeyLivesInTheMetadataSubspace() {
    assertEquals(Tuple.from("version"), metadata.unpack(schema.versionKey()));
  }

  @Test
  void versionBumpIsARawVersionstampOperandWithOffsetZero() {
    byte[] operand = DirectorySchema.packVersionBump();
    assertEquals(14, operand.length);
    assertEquals(0, ByteBuffer.wrap(operand, 10, 4).order(ByteOrder.LITTLE_ENDIAN).getInt());
  }

  @Test
  void versionValueRoundTrips() {
    byte[] stamp = {0, 0, 0, 0, 0, 0, 0, 42, 0, 1};
    assertArrayEquals(stamp, DirectorySchema.unpackVersion(stamp));
    assertArrayEquals(new byte[0], DirectorySchema.unpackVersion(null));
    assertThrows(IllegalStateException.class, () -> DirectorySchema.unpackVersion(new byte[8]));
  }

  @Test
  void layerTagRoundTrips() {
    for (String tag : new String[] {"", "queue", "partition", "\u00e9t\u00e9 \uD83D\uDE00"}) {
      assertEquals(tag, DirectorySchema.unpackLayer(DirectorySchema.packLayer(tag)));
    }
    assertArrayEquals(new byte[0], DirectorySchema.packLayer(null));
    assertEquals("", DirectorySchema.unpackLayer(null));
  }

  @Test
  void pagesFollowUtf8OrderAndStartAfter() {
    List<String> names = List.of("b", "a", "\uD83D\uDE00", "\uFFFD", "c");
    DirectoryPage first = DirectorySchema.page(names, null, 2);
    assertEquals(List.of("a", "b"), first.names());
    assertTrue(first.hasMore());
    DirectoryPage second = DirectorySchema.page(names, first.nextStartAfter(), 2);
    // U+FFFD is EF BF BD in UTF-8, the emoji F0 9F 98 80: byte order, not UTF-16 order.
    assertEquals(List.of("c", "\uFFFD"), second.names());
    DirectoryPage third = DirectorySchema.page(names, second.nextStartAfter(), 2);
    assertEquals(List.of("\uD83D\uDE00"), third.names());
    assertFalse(third.hasMore());
    assertNull(third.nextStartAfter());
    assertEquals(List.of(), DirectorySchema.page(names, "\uD83D\uDE00", 5).names());
    assertEquals(List.of("b", "c"), DirectorySchema.page(names, "a0", 2).names());
  }

  @Test
  void exactlyFullPageHasNoMore() {
    DirectoryPage page = DirectorySchema.page(List.of("a", "b"), null, 2);
    assertEquals(List.of("a", "b"), page.names());
    assertFalse(page.hasMore());
  }

  @Test
  void directoryInfoExposesPrefixAsHexAndJson() {
    DirectoryInfo info = new DirectoryInfo(List.of("a", "b"), "queue".getBytes(), new byte[] {0x15, 0x0a, (byte) 0xff});
    assertEquals("150aff", info.prefixHex());
    assertEquals("queue", info.layer());
    assertFalse(info.isPartition());
    assertArrayEquals(new byte[] {0x15, 0x0a, (byte) 0xff}, info.keyPrefix());
    Map<String, Object> json = info.toJsonMap();
    assertEquals(List.of("a", "b"), json.get("path"));
    assertEquals("150aff", json.get("prefix"));
    assertEquals(false, json.get("partition"));
    assertEquals(info, new DirectoryInfo(new ArrayList<>(List.of("a", "b")), "queue".getBytes(), new byte[] {0x15, 0x0a, (byte) 0xff}));
  }

  @Test
  void partitionInfoHasNoUsableSubspace() {
    DirectoryInfo partition = new DirectoryInfo(List.of("p"), "partition".getBytes(), new byte[] {0x16});
    assertTrue(partition.isPartition());
    IllegalStateException e = assertThrows(IllegalStateException.class, partition::keyPrefix);
    assertTrue(e.getMessage().contains("/p is a partition"), e.getMessage());
  }

  @Test
  void directoryInfoCopiesItsBytes() {
    byte[] prefix = {1, 2};
    DirectoryInfo info = new DirectoryInfo(List.of("x"), new byte[0], prefix);
    prefix[0] = 9;
    info.prefix()[1] = 9;
    assertArrayEquals(new byte[] {1, 2}, info.prefix());
  }

  @Test
  void servicePathRoundTripsThroughTheRootPath() {
    DirectorySchema rooted = new DirectorySchema(DirectoryLayer.getDefault(), metadata, List.of("svc", "dirs"));
    for (List<String> path : List.of(List.<String>of(), List.of("a"), List.of("a", "b", "\u00e9t\u00e9"))) {
      List<String> absolute = rooted.packPath(path);
      assertEquals(List.of("svc", "dirs"), absolute.subList(0, 2));
      assertEquals(path, rooted.unpackPath(absolute));
      assertEquals(path, schema.unpackPath(schema.packPath(path)), "the empty root leaves paths as they are");
    }
    assertEquals(List.of("elsewhere"), rooted.unpackPath(List.of("elsewhere")), "a path outside the root is kept whole");
  }
}

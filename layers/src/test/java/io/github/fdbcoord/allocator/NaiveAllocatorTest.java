package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NaiveAllocatorTest {
  private static Database db;
  private DirectorySubspace dir;
  private AllocatorService service;

  @BeforeAll
  static void openDatabase() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void createDirectory() throws Exception {
    dir = DirectoryLayer.getDefault()
        .createOrOpen(db, List.of("test", UUID.randomUUID().toString())).get(10, TimeUnit.SECONDS);
    service = AllocatorService.create(db, AllocatorServiceOptions.builder().root(dir).build());
  }

  @AfterEach
  void removeDirectory() throws Exception {
    DirectoryLayer.getDefault().removeIfExists(db, dir.getPath()).get(10, TimeUnit.SECONDS);
  }

  @Test
  void concurrentNaiveAllocationsAreDistinctAndDense() throws Exception {
    NaiveAllocator a = service.naiveAllocator("naive");
    List<Long> values = HighContentionAllocatorTest.allocateConcurrently(db.getExecutor(), 16, 10, a::allocate);
    List<Long> expected = LongStream.rangeClosed(1, 160).boxed().collect(Collectors.toList());
    assertEquals(expected, values.stream().sorted().collect(Collectors.toList()));
  }

  @Test
  void naiveAndWindowedAllocatorsOfOneNameAreIndependent() throws Exception {
    long naive = service.naiveAllocator("x").allocate().get(10, TimeUnit.SECONDS);
    long windowed = service.allocator("x").allocate().get(10, TimeUnit.SECONDS);
    assertEquals(1, naive);
    assertTrue(windowed >= 0 && windowed < 64);
  }

  @Test
  void badNamesAreRefusedClearly() {
    for (String bad : new String[] {null, "", "x".repeat(AllocatorServiceOptions.MAX_NAME_LENGTH + 1), "a\uD800b"}) {
      AllocatorException e = assertThrows(AllocatorException.class, () -> service.allocator(bad));
      assertEquals(AllocatorException.Kind.BAD_REQUEST, e.kind());
      assertTrue(e.getMessage().startsWith("allocator name"), e.getMessage());
    }
    ExecutionException failed = assertThrows(ExecutionException.class,
        () -> service.allocate("").get(10, TimeUnit.SECONDS));
    assertInstanceOf(AllocatorException.class, failed.getCause());
    assertThrows(AllocatorException.class, () -> service.naiveAllocator(null));
  }
}

package io.github.fdbcoord.interner;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InternerIdsTest {
  @Test
  void formatAndParseAreUnsigned() {
    for (long id : new long[] {1, 42, Long.MAX_VALUE, Long.MIN_VALUE, -1L}) {
      assertEquals(id, InternerIds.parse(InternerIds.format(id)));
    }
    assertEquals("18446744073709551615", InternerIds.format(-1L));
    assertEquals("9223372036854775808", InternerIds.format(Long.MIN_VALUE));
  }

  @Test
  void malformedIdsAreBadRequests() {
    for (String bad : new String[] {null, "", "-1", "+1", "1.0", "abc", " 1", "0x10", "18446744073709551616"}) {
      InternerException e = assertThrows(InternerException.class, () -> InternerIds.parse(bad), String.valueOf(bad));
      assertEquals(InternerException.Kind.BAD_REQUEST, e.kind());
      assertTrue(e.getMessage().contains("id"), e.getMessage());
    }
  }

  @Test
  void optionsRejectBadValues() {
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().sequenceBits(0));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().sequenceBits(64));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().maxSequenceTries(0));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().maxBatchSize(0));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().cacheMaxBytes(-1));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().retryLimit(-2));
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().rootPath(java.util.List.of()));
    assertThrows(IllegalArgumentException.class,
        () -> InternerOptions.builder().transactionTimeout(java.time.Duration.ofMillis(-1)));
    InternerOptions d = InternerOptions.defaults();
    assertEquals(16, d.sequenceBits());
    assertEquals(InternerOptions.DEFAULT_ROOT_PATH, d.rootPath());
  }

  @Test
  void fdbCodesMapToKinds() {
    assertEquals(InternerException.Kind.CONFLICT, InternerException.kindOf(1020));
    assertEquals(InternerException.Kind.TIMEOUT, InternerException.kindOf(1031));
    assertEquals(InternerException.Kind.BAD_REQUEST, InternerException.kindOf(2101));
    assertEquals(InternerException.Kind.STORE_FAILURE, InternerException.kindOf(4100));
    InternerException e = InternerException.from(
        new java.util.concurrent.CompletionException(io.github.fdbcoord.fdb.FdbErrors.error(1020)));
    assertEquals(1020, e.fdbCode());
    assertEquals(InternerException.Kind.CONFLICT, e.kind());
  }
}

package io.github.fdbcoord.api;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The records of the interner: interned strings, namespace counts and pages. */
class InternerValuesTest {

  @Test
  void aPageKeepsItsEntriesAsGiven() {
    List<InternedString> entries = new ArrayList<>(List.of(new InternedString(-1L, "z")));
    InternedPage page = new InternedPage("ns", entries, OptionalLong.of(-1L));
    entries.clear();
    assertEquals(List.of(new InternedString(-1L, "z")), page.entries());
    assertThrows(UnsupportedOperationException.class, () -> page.entries().add(new InternedString(1, "a")));
  }

  @Test
  void valuesRefuseNulls() {
    assertThrows(NullPointerException.class, () -> new InternedString(1, null));
    assertThrows(NullPointerException.class, () -> new InternerStats(null, 0, 0, 1));
    assertThrows(NullPointerException.class, () -> new InternedPage(null, List.of(), OptionalLong.empty()));
    assertThrows(NullPointerException.class, () -> new InternedPage("ns", null, OptionalLong.empty()));
    assertThrows(NullPointerException.class, () -> new InternedPage("ns", List.of(), null));
  }
}

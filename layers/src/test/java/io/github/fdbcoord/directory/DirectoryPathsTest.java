package io.github.fdbcoord.directory;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectoryPathsTest {

  private static void assertBadRequest(Object path, String expectedMessagePart) {
    DirectoryServiceException e = assertThrows(DirectoryServiceException.class, () -> DirectoryPaths.validate(path));
    assertEquals(DirectoryServiceException.Kind.BAD_REQUEST, e.kind());
    assertTrue(e.getMessage().contains(expectedMessagePart), e.getMessage());
  }

  @Test
  void acceptsListsOfStringsAndCopiesThem() {
    List<String> in = new ArrayList<>(List.of("a", "b"));
    List<String> out = DirectoryPaths.validate(in);
    in.set(0, "changed");
    assertEquals(List.of("a", "b"), out);
    assertThrows(UnsupportedOperationException.class, () -> out.add("c"));
  }

  @Test
  void refusesEmptyMissingAndNonListPaths() {
    assertBadRequest(List.of(), "must not be empty");
    assertBadRequest(null, "path is missing");
    assertBadRequest("a/b", "must be a list of strings");
    assertEquals(List.of(), DirectoryPaths.validate(List.of(), true));
  }

  @Test
  void refusesElementsThatAreNotStrings() {
    assertBadRequest(Arrays.asList("a", 42), "path element 1 is not a string: 42 (Integer)");
    assertBadRequest(Arrays.asList("a", null), "path element 1 is null");
    assertBadRequest(List.of(List.of("nested")), "path element 0 is not a string");
  }

  @Test
  void refusesBrokenUnicodeAndOversizedElements() {
    assertBadRequest(List.of("ok", "x\uDC00"), "path element 1 is not valid Unicode");
    assertBadRequest(List.of("x".repeat(DirectoryPaths.MAX_ELEMENT_BYTES + 1)), "bytes long in UTF-8");
    List<String> deep = new ArrayList<>();
    for (int i = 0; i <= DirectoryPaths.MAX_DEPTH; i++) {
      deep.add("d");
    }
    assertBadRequest(deep, "elements, the limit is");
    assertEquals(List.of("\uD83D\uDE00"), DirectoryPaths.validate(List.of("\uD83D\uDE00")));
  }

  @Test
  void formatsPathsForMessages() {
    assertEquals("/", DirectoryPaths.format(List.of()));
    assertEquals("/a/b", DirectoryPaths.format(List.of("a", "b")));
  }

  @Test
  void checksLayerTags() {
    assertEquals(null, DirectoryPaths.validateLayer(null));
    assertEquals("queue", DirectoryPaths.validateLayer("queue"));
    DirectoryServiceException broken = assertThrows(DirectoryServiceException.class,
        () -> DirectoryPaths.validateLayer("q\uD800"));
    assertEquals("layer tag is not valid Unicode (unpaired surrogate)", broken.getMessage());
    assertThrows(DirectoryServiceException.class,
        () -> DirectoryPaths.validateLayer("x".repeat(DirectoryPaths.MAX_ELEMENT_BYTES + 1)));
  }
}

package io.github.fdbcoord.allocator;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Allocator names: what is refused and why (found unchecked by mutation testing). */
class AllocatorNameTest {
  private static void refused(Executable call, String why) {
    AllocatorException e = assertThrows(AllocatorException.class, call);
    assertEquals(AllocatorException.Kind.BAD_REQUEST, e.kind());
    assertTrue(e.getMessage().contains(why), e.getMessage());
  }

  @Test
  void namesAreRefusedWhenMissingEmptyTooLongOrNotText() {
    int max = AllocatorServiceOptions.MAX_NAME_LENGTH;
    refused(() -> AllocatorService.validateName(null), "missing");
    refused(() -> AllocatorService.validateName(""), "empty");
    assertDoesNotThrow(() -> AllocatorService.validateName("n".repeat(max)));
    refused(() -> AllocatorService.validateName("n".repeat(max + 1)), (max + 1) + " characters long");
    refused(() -> AllocatorService.validateName("ab\uD83D"), "unpaired surrogate at index 2");
    refused(() -> AllocatorService.validateName("a\uD83Db"), "unpaired surrogate at index 1");
    refused(() -> AllocatorService.validateName("a\uDE00"), "unpaired surrogate at index 1");
    refused(() -> AllocatorService.validateName("\uD83D\uDE00\uDE00"), "unpaired surrogate at index 2");
    assertDoesNotThrow(() -> AllocatorService.validateName("pair \uD83D\uDE00 and text"));
  }

  @Test
  void theServiceChecksNamesBeforeTouchingTheStore() {
    try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
      AllocatorService service = AllocatorService.create(db);
      refused(() -> service.subspaceOf(""), "empty");
      refused(() -> service.subspaceOf("x\uD800"), "unpaired surrogate");
      assertEquals(service.subspaceOf("a"), service.subspaceOf("a"));
    }
  }
}

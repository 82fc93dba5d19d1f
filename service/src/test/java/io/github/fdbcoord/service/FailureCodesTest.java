package io.github.fdbcoord.service;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.allocator.AllocatorException;
import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.directory.DirectoryServiceException;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.interner.InternerException;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each layer's exception kinds reach the event bus as the code and reason docs/vertx.md lists
 * ("Event-bus contract"): the contract's table, pinned here kind by kind, whichever shared
 * {@link FailureKind} a kind now goes through.
 */
class FailureCodesTest {

  private record Expected(int code, String reason) {}

  private static final Map<DirectoryServiceException.Kind, Expected> DIRECTORY = Map.of(
      DirectoryServiceException.Kind.BAD_REQUEST, new Expected(400, "bad_request"),
      DirectoryServiceException.Kind.NOT_FOUND, new Expected(404, "not_found"),
      DirectoryServiceException.Kind.ALREADY_EXISTS, new Expected(409, "already_exists"),
      DirectoryServiceException.Kind.LAYER_MISMATCH, new Expected(409, "layer_mismatch"),
      DirectoryServiceException.Kind.INCOMPATIBLE_VERSION, new Expected(503, "unavailable"));

  private static final Map<AllocatorException.Kind, Expected> ALLOCATOR = Map.of(
      AllocatorException.Kind.BAD_REQUEST, new Expected(400, "bad_request"));

  private static final Map<InternerException.Kind, Expected> INTERNER = Map.of(
      InternerException.Kind.BAD_REQUEST, new Expected(400, "bad_request"),
      InternerException.Kind.NOT_FOUND, new Expected(404, "not_found"),
      InternerException.Kind.CONFLICT, new Expected(409, "conflict"),
      InternerException.Kind.TIMEOUT, new Expected(409, "timed_out"),
      InternerException.Kind.EXHAUSTED, new Expected(409, "exhausted"),
      InternerException.Kind.STORE_FAILURE, new Expected(503, "unavailable"));

  private static final Map<MutexException.Kind, Expected> MUTEX = Map.of(
      MutexException.Kind.NOT_HELD, new Expected(409, "not_held"),
      MutexException.Kind.NOT_OWNER, new Expected(409, "not_owner"),
      MutexException.Kind.TIMED_OUT, new Expected(409, "timed_out"),
      MutexException.Kind.QUEUE_FULL, new Expected(409, "queue_full"),
      MutexException.Kind.NOT_QUEUED, new Expected(409, "not_queued"),
      MutexException.Kind.CLOSED, new Expected(503, "closed"));

  private static void assertReply(Expected expected, String message, ReplyException reply) {
    assertEquals(ReplyFailure.RECIPIENT_FAILURE, reply.failureType());
    assertEquals(expected.code(), reply.failureCode(), reply.getMessage());
    assertEquals(expected.reason(), FailureCodes.reasonOf(reply));
    assertEquals(message, FailureCodes.detailOf(reply));
  }

  @Test
  void everyLayerKindKeepsItsCodeAndReason() {
    assertEquals(Set.of(DirectoryServiceException.Kind.values()), DIRECTORY.keySet());
    DIRECTORY.forEach((kind, expected) ->
        assertReply(expected, "dir " + kind, FailureCodes.of(new DirectoryServiceException(kind, List.of("a"), "dir " + kind))));
    assertEquals(Set.of(AllocatorException.Kind.values()), ALLOCATOR.keySet());
    ALLOCATOR.forEach((kind, expected) ->
        assertReply(expected, "alloc " + kind, FailureCodes.of(new AllocatorException(kind, "alloc " + kind))));
    assertEquals(Set.of(InternerException.Kind.values()), INTERNER.keySet());
    INTERNER.forEach((kind, expected) ->
        assertReply(expected, "ns " + kind, FailureCodes.of(new InternerException(kind, "ns " + kind))));
    assertEquals(Set.of(MutexException.Kind.values()), MUTEX.keySet());
    MUTEX.forEach((kind, expected) ->
        assertReply(expected, "m " + kind, FailureCodes.of(new MutexException(kind, "m", "m " + kind))));
  }

  @Test
  void aLayerFailureWrappedByAFutureIsClassifiedByItsKind() {
    CoordinationException notOwner = new MutexException(MutexException.Kind.NOT_OWNER, "m", "not yours");
    assertReply(new Expected(409, "not_owner"), "not yours", FailureCodes.of(new CompletionException(notOwner)));
  }

  @Test
  void kindsOfTheSameMeaningShareTheirReply() {
    // Each shared meaning is mapped once: kinds of different layers that mean it answer alike.
    assertEquals(FailureKind.TIMED_OUT, InternerException.Kind.TIMEOUT.failureKind());
    assertEquals(FailureKind.TIMED_OUT, MutexException.Kind.TIMED_OUT.failureKind());
    assertEquals(FailureKind.BAD_REQUEST, AllocatorException.Kind.BAD_REQUEST.failureKind());
    assertEquals(FailureKind.BAD_REQUEST, DirectoryServiceException.Kind.BAD_REQUEST.failureKind());
    assertEquals(FailureKind.NOT_FOUND, InternerException.Kind.NOT_FOUND.failureKind());
    assertEquals(FailureKind.NOT_FOUND, DirectoryServiceException.Kind.NOT_FOUND.failureKind());
    assertEquals(FailureKind.UNAVAILABLE, InternerException.Kind.STORE_FAILURE.failureKind());
    assertEquals(FailureKind.UNAVAILABLE, DirectoryServiceException.Kind.INCOMPATIBLE_VERSION.failureKind());
  }

  @Test
  void everyFailureKindIsOneOfTheFourCodes() {
    List<Integer> codes = List.of(FailureCodes.BAD_REQUEST, FailureCodes.NOT_FOUND, FailureCodes.CONFLICT,
        FailureCodes.UNAVAILABLE);
    List<String> reasons = new ArrayList<>();
    for (FailureKind kind : FailureKind.values()) {
      ReplyException reply = FailureCodes.failure(kind, "why");
      assertTrue(codes.contains(reply.failureCode()), kind + ": " + reply.failureCode());
      assertEquals(reply.failureCode(), FailureCodes.codeOf(reply));
      assertEquals("why", FailureCodes.detailOf(reply));
      reasons.add(FailureCodes.reasonOf(reply));
      // docs/vertx.md tells client-only nodes (which have the api's FailureKind, not this class) so.
      assertEquals(kind.name().toLowerCase(Locale.ROOT), FailureCodes.reasonOf(reply), "the reason word is the kind's name");
    }
    assertEquals(FailureKind.values().length, Set.copyOf(reasons).size(), "a reason word per kind: " + reasons);
  }

  @Test
  void aStoreThatDidNotAnswerInTimeIsStoreUnavailable() {
    // Not the event bus's no_reply ("the node may have died"): the node answered, the store did not.
    assertReply(new Expected(503, "store_unavailable"), "no answer within 5000 ms",
        FailureCodes.failure(FailureKind.STORE_UNAVAILABLE, "no answer within 5000 ms"));
  }

  @Test
  void storeErrorsAndBadArgumentsOutsideALayer() {
    assertReply(new Expected(409, "timed_out"), "store error 1031: timed out",
        FailureCodes.of(new FDBException("timed out", FdbErrors.TRANSACTION_TIMED_OUT)));
    assertReply(new Expected(409, "conflict"), "store error 1020: not committed",
        FailureCodes.of(new FDBException("not committed", FdbErrors.NOT_COMMITTED)));
    assertReply(new Expected(400, "bad_request"), "store error 2101: too large",
        FailureCodes.of(new FDBException("too large", FdbErrors.TRANSACTION_TOO_LARGE)));
    assertReply(new Expected(503, "unavailable"), "store error 1510: io",
        FailureCodes.of(new FDBException("io", FdbErrors.IO_ERROR)));
    assertReply(new Expected(503, "store_corrupt"), "store error 1522: corrupt",
        FailureCodes.of(new InternerException(InternerException.Kind.STORE_FAILURE, "wrapped", FdbErrors.FILE_CORRUPT,
            new FDBException("corrupt", FdbErrors.FILE_CORRUPT))));
    assertReply(new Expected(400, "bad_request"), "no such limit",
        FailureCodes.of(new IllegalArgumentException("no such limit")));
  }
}

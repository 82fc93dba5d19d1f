package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.client.wire.InternerWire;
import io.github.fdbcoord.interner.InternerIds;
import io.github.fdbcoord.interner.InternerService;

import java.util.ArrayList;
import java.util.List;

/**
 * The string interner on its address ({@code <prefix>.interner}). Actions: intern, lookup, resolve,
 * listNamespaces, removeNamespace. Ids travel as unsigned decimal strings: JSON numbers lose
 * precision above 2^53.
 */
public final class InternerVerticle extends LayerVerticle {
  private final InternerService interners;
  private final int maxBatchSize;

  /** Serves {@code interners} on {@code address}; a request carries at most {@code maxBatchSize} strings or ids. */
  public InternerVerticle(String address, InternerService interners, int maxBatchSize, StoreWorkers workers,
      Metrics metrics) {
    super(address, workers, metrics);
    this.interners = interners;
    this.maxBatchSize = maxBatchSize;
  }

  /** Registers intern, resolve, lookup, stats, list, listNamespaces and removeNamespace. */
  @Override
  protected void registerActions() {
    action(InternerWire.INTERN, body -> {
      String ns = Requests.requiredString(body, "namespace");
      List<String> strings = Requests.requiredStrings(body, "strings", maxBatchSize);
      return store(() -> interners.open(ns).thenCompose(interner -> interner.intern(strings)))
          .map(ids -> InternerWire.interned(ns, ids));
    });
    action(InternerWire.RESOLVE, body -> {
      String ns = Requests.requiredString(body, "namespace");
      List<String> strings = Requests.requiredStrings(body, "strings", maxBatchSize);
      return store(() -> interners.openExisting(ns).thenCompose(interner -> interner.resolve(strings)))
          .map(ids -> InternerWire.resolved(ns, ids));
    });
    action(InternerWire.LOOKUP, body -> {
      String ns = Requests.requiredString(body, "namespace");
      List<Long> ids = parseIds(Requests.requiredList(body, "ids", maxBatchSize));
      return store(() -> interners.openExisting(ns).thenCompose(interner -> interner.lookup(ids)))
          .map(strings -> InternerWire.lookedUp(ns, strings));
    });
    action(InternerWire.STATS, body -> {
      String ns = Requests.requiredString(body, "namespace");
      return store(() -> interners.openExisting(ns).thenCompose(interner -> interner.stats()))
          .map(InternerWire::stats);
    });
    action(InternerWire.LIST, body -> {
      String ns = Requests.requiredString(body, "namespace");
      String afterText = Requests.optionalString(body, "after");
      long after = afterText == null ? 0 : parseAfter(afterText);
      Long limit = Requests.optionalLong(body, "limit", 1, maxBatchSize);
      int n = limit == null ? Math.min(100, maxBatchSize) : limit.intValue();
      return store(() -> interners.openExisting(ns).thenCompose(interner -> interner.list(after, n)))
          .map(page -> InternerWire.page(ns, page, n));
    });
    action(InternerWire.LIST_NAMESPACES, body -> store(interners::listNamespaces).map(InternerWire::namespaces));
    action(InternerWire.REMOVE_NAMESPACE, body -> {
      String ns = Requests.requiredString(body, "namespace");
      return store(() -> interners.removeNamespace(ns))
          .map(b -> InternerWire.removed(ns, b));
    });
  }

  private static long parseAfter(String text) {
    try {
      return InternerIds.parse(text);
    } catch (RuntimeException e) {
      throw FailureCodes.badRequest("field 'after': " + e.getMessage());
    }
  }

  /** Ids as unsigned decimal strings (or JSON integers up to 2^53, accepted for convenience). */
  private static List<Long> parseIds(List<Object> raw) {
    List<Long> out = new ArrayList<>(raw.size());
    for (int i = 0; i < raw.size(); i++) {
      Object o = raw.get(i);
      if (o instanceof String) {
        try {
          out.add(InternerIds.parse((String) o));
        } catch (RuntimeException e) {
          throw FailureCodes.badRequest("field 'ids' item " + i + ": " + e.getMessage());
        }
      } else if ((o instanceof Integer || o instanceof Long) && ((Number) o).longValue() >= 0) {
        out.add(((Number) o).longValue());
      } else {
        throw FailureCodes.badRequest("field 'ids' item " + i
            + " must be an id as an unsigned decimal string, got " + Requests.describe(o));
      }
    }
    return out;
  }
}

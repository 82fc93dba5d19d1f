package io.github.fdbcoord.modulepath;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.allocator.HighContentionAllocator;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Started by {@link ModulePathIT} on the module path (this class on the class path): opens an in-memory
 * store, which {@link Store} finds through ServiceLoader across modules, and allocates twice through
 * the high-contention allocator. Prints the modules the classes came from; exits 0 only if every step
 * worked, 1 otherwise.
 */
public final class LayersProbe {
  private LayersProbe() {}

  public static void main(String[] args) throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (Store store = Store.open(StoreOptions.embeddedInMemory(), executor)) {
      Database database = store.database();
      HighContentionAllocator allocator =
          new HighContentionAllocator("probe", database, new Subspace(Tuple.from("probe")), executor);
      long first = database.runAsync(allocator::allocateOnce, executor).get(30, TimeUnit.SECONDS);
      long second = database.runAsync(allocator::allocateOnce, executor).get(30, TimeUnit.SECONDS);
      System.out.println("store module: " + Store.class.getModule().getName());
      System.out.println("layers module: " + HighContentionAllocator.class.getModule().getName());
      System.out.println("database module: " + database.getClass().getModule().getName());
      System.out.println("allocated: " + first + " " + second);
      if (first == second) {
        System.err.println("the allocator gave the same id twice");
        System.exit(1);
      }
    } finally {
      executor.shutdownNow();
    }
  }
}

package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.Assumptions;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * What a conformance test works with: one engine's database, a random key prefix that belongs to
 * this test alone (cleared afterwards), and the transactions and extra databases it opened
 * (closed afterwards).
 */
public final class Fixture implements AutoCloseable {
  private final String engine;
  private final Database db;
  private final byte[] prefix;
  private final List<AutoCloseable> owned = new ArrayList<>();

  Fixture(String engine, Database db) {
    this.engine = engine;
    this.db = db;
    this.prefix = bytes("conformance/" + UUID.randomUUID() + "/");
  }

  public String engine() {
    return engine;
  }

  public boolean isEmbedded() {
    return engine.equals(Engines.EMBEDDED);
  }

  public Database db() {
    return db;
  }

  /** This test's key prefix. */
  public byte[] prefix() {
    return prefix.clone();
  }

  /** Every key of this test. */
  public Range range() {
    return Range.startsWith(prefix);
  }

  public byte[] key(String name) {
    return key(bytes(name));
  }

  public byte[] key(byte[] suffix) {
    return concat(prefix, suffix);
  }

  /** A new transaction on the shared database, closed after the test. */
  public Transaction tx() {
    return own(db.createTransaction());
  }

  /** Commits {@code key = value} (value null clears) in its own transaction. */
  public void put(byte[] key, byte[] value) {
    db.run(tr -> {
      if (value == null) {
        tr.clear(key);
      } else {
        tr.set(key, value);
      }
      return null;
    });
  }

  public void put(String name, String value) {
    put(key(name), value == null ? null : bytes(value));
  }

  /** The committed value of {@code key}, read in a new transaction. */
  public byte[] read(byte[] key) {
    return db.read(tr -> tr.get(key).join());
  }

  public String read(String name) {
    byte[] v = read(key(name));
    return v == null ? null : string(v);
  }

  /** The committed contents of this test's prefix. */
  public List<KeyValue> readAll() {
    return db.read(tr -> tr.getRange(range()).asList().join());
  }

  /** A database of its own for this engine (for database options and watch limits); closed after the test. */
  public Database freshDatabase() {
    Database db = EngineExtension.open(engine);
    own(() -> Engines.close(db));
    return db;
  }

  /** An embedded database with these options; aborts the test on other engines. */
  public Database embeddedDatabase(EmbeddedOptions options) {
    Assumptions.assumeTrue(isEmbedded(), "embedded engine only");
    return own(Engines.openEmbedded(options));
  }

  public <T extends AutoCloseable> T own(T resource) {
    owned.add(resource);
    return resource;
  }

  @Override
  public void close() {
    for (int i = owned.size() - 1; i >= 0; i--) {
      try {
        owned.get(i).close();
      } catch (Exception ignored) {
        // closing is best effort; the test's result is already decided
      }
    }
    owned.clear();
    try {
      db.run(tr -> {
        tr.clear(range());
        return null;
      });
    } catch (RuntimeException ignored) {
      // a broken engine must not hide the test's own failure
    }
  }

  public static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  public static String string(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  public static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }

  public static byte[] filled(int length, byte value) {
    byte[] b = new byte[length];
    Arrays.fill(b, value);
    return b;
  }
}

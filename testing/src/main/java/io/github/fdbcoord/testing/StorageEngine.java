package io.github.fdbcoord.testing;

/** The storage engine a test server's database is created with ({@code configure new ... ENGINE}). */
public enum StorageEngine {
  /** FoundationDB's memory engine: fast, the default for tests. */
  MEMORY("memory"),
  /** The B-tree engine on disk ({@code ssd}), for tests that restart processes and expect data to survive. */
  SSD("ssd");

  private final String configureName;

  StorageEngine(String configureName) {
    this.configureName = configureName;
  }

  /** The name {@code fdbcli configure} takes. */
  public String configureName() {
    return configureName;
  }
}

package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.TransactionEngine;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;

import java.util.Objects;
import java.util.function.BiFunction;

/**
 * What a database shares with its transactions (FoundationDB's client {@code DatabaseContext}): the
 * engine they run on, their defaults, and the database they report as theirs. Built once per database.
 */
public final class DatabaseContext {
  final Database database;
  final TransactionEngine engine;
  final TransactionDefaults defaults;
  final BiFunction<FDBException, String, FDBException> heldError;

  /**
   * @param database what {@code Transaction.getDatabase()} answers
   * @param engine the engine the transactions read from and commit to
   * @param defaults the database's defaults of transaction options
   * @param heldError the error a commit withdrawn while held for lack of disk space fails with: its
   *     cancellation or timeout error, and why commits were held
   */
  public DatabaseContext(Database database, TransactionEngine engine, TransactionDefaults defaults,
      BiFunction<FDBException, String, FDBException> heldError) {
    this.database = Objects.requireNonNull(database, "database");
    this.engine = Objects.requireNonNull(engine, "engine");
    this.defaults = Objects.requireNonNull(defaults, "defaults");
    this.heldError = Objects.requireNonNull(heldError, "heldError");
  }
}

package io.github.fdbcoord.interner;

/** One interned string and its id (unsigned: print it with {@link InternerIds#format}). */
public record InternedString(long id, String string) {}

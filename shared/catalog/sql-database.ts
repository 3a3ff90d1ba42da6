// The seam between the SQL catalog's logic (sql.ts) and the database it keeps its two tables in:
// a SQLite file (sqlite.ts) or a PostgreSQL server (postgres.ts). The catalog writes each
// statement once, in the SQL both dialects share (`?` placeholders, ON CONFLICT DO NOTHING,
// LIKE ... ESCAPE); a database runs it and tells how a failure is to be read. Internal to
// shared/catalog.
import type { FloeError } from '../errors.ts'

export type SqlValue = string | null

export interface SqlResult {
  rows: Record<string, unknown>[]
  /** Rows an INSERT, UPDATE or DELETE changed. */
  changes: number
}

export interface SqlDatabase {
  /** For logs and errors: `sqlite <path>` or `postgresql <user>@<host>:<port>/<database>`. Never a secret. */
  readonly description: string

  /**
   * Runs one statement with `?` placeholders. A FloeError thrown here means the statement never
   * ran (the connection could not be had, the file stayed locked): nothing was applied. Any
   * other error is the database's own, read with `isUniqueViolation` and `failure`.
   */
  query(sql: string, parameters?: readonly SqlValue[]): Promise<SqlResult>

  /** Runs the CREATE TABLE IF NOT EXISTS statements, another process running them at once included. */
  createTables(statements: readonly string[]): Promise<void>

  /** The column names of `table`, to tell Java's layout (with iceberg_type) from pyiceberg's. */
  columns(table: string): Promise<string[]>

  /** A primary key another writer took first. */
  isUniqueViolation(error: unknown): boolean

  /** Whether a failed statement certainly did not change anything (else a commit's outcome is unknown). */
  neverApplied(error: unknown): boolean

  /** The FloeError for a failed statement that was not a conflict: what the database said, classified. */
  failure(error: unknown, what: string): FloeError

  close(): Promise<void>
}

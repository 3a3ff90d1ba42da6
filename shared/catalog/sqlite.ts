// The SQL catalog on a SQLite file: node:sqlite (built into Node 22), loaded without its one-time
// ExperimentalWarning, and the retry of a statement that met another process's write lock.
import { createRequire } from 'node:module'
import type { DatabaseSync } from 'node:sqlite'
import { setTimeout as sleep } from 'node:timers/promises'
import { FloeError } from '../errors.ts'
import type { SqlDatabase, SqlResult, SqlValue } from './sql-database.ts'

type SqliteModule = typeof import('node:sqlite')
let loaded: SqliteModule | undefined

/**
 * The node:sqlite module. Node prints "SQLite is an experimental feature" on its first load; an
 * operator's log should not carry that on every start, so that one warning is dropped while the
 * module loads (synchronously, so no other warning can pass by meanwhile). Everything else
 * still reaches process.emitWarning. `node --disable-warning=ExperimentalWarning` is the
 * process-wide alternative.
 */
export function sqliteModule(): SqliteModule {
  if (loaded !== undefined) return loaded
  const original = process.emitWarning
  const filtered = (warning: string | Error, ...rest: unknown[]): void => {
    const options = rest[0]
    const type = typeof options === 'string' ? options : (options as { type?: unknown } | undefined)?.type
    if (type === 'ExperimentalWarning' && String(warning).includes('SQLite')) return
    Reflect.apply(original, process, [warning, ...rest])
  }
  process.emitWarning = filtered as typeof process.emitWarning
  try {
    loaded = createRequire(import.meta.url)('node:sqlite') as SqliteModule
  } finally {
    process.emitWarning = original
  }
  return loaded
}

/** SQLITE_BUSY (5) or SQLITE_LOCKED (6), extended codes included. */
export function isBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | undefined)?.errcode
  return typeof errcode === 'number' && ((errcode & 0xff) === 5 || (errcode & 0xff) === 6)
}

/** SQLITE_CONSTRAINT (19): here, a primary key another writer took first. */
export function isConstraint(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | undefined)?.errcode
  return typeof errcode === 'number' && (errcode & 0xff) === 19
}

/**
 * Runs a statement, retrying while another connection holds the write lock, until `timeoutMs`.
 * SQLite's own busy handler would wait inside the synchronous call and stall the event loop (and
 * with it Kafka heartbeats), so the connection waits only briefly and the retries sleep here.
 */
export async function retryWhileBusy<T>(timeoutMs: number, statement: () => T): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let delayMs = 2
  for (;;) {
    try {
      return statement()
    } catch (error) {
      if (!isBusy(error)) throw error
      if (Date.now() + delayMs > deadline) {
        throw new FloeError('CATALOG_UNAVAILABLE', `SQLite catalog stayed locked for ${timeoutMs} ms`, { cause: error })
      }
      await sleep(delayMs)
      delayMs = Math.min(delayMs * 2, 100)
    }
  }
}

/** Opens the file in WAL mode (readers never block the writer; several processes share it). */
export async function openDatabase(path: string, timeoutMs: number): Promise<DatabaseSync> {
  const { DatabaseSync } = sqliteModule()
  const database = new DatabaseSync(path, { timeout: 20 })
  try {
    await retryWhileBusy(timeoutMs, () => database.exec('PRAGMA journal_mode = WAL'))
    return database
  } catch (error) {
    database.close()
    throw error
  }
}

/** A SQLite file as the SQL catalog's database (sql-database.ts). */
export class SqliteDatabase implements SqlDatabase {
  readonly description: string
  readonly #db: DatabaseSync
  readonly #busyMs: number

  private constructor(db: DatabaseSync, path: string, busyMs: number) {
    this.#db = db
    this.#busyMs = busyMs
    this.description = `sqlite ${path}`
  }

  static async open(path: string, busyMs: number): Promise<SqliteDatabase> {
    return new SqliteDatabase(await openDatabase(path, busyMs), path, busyMs)
  }

  async query(sql: string, parameters: readonly SqlValue[] = []): Promise<SqlResult> {
    return retryWhileBusy(this.#busyMs, () => {
      const statement = this.#db.prepare(sql)
      if (/^\s*SELECT\b/i.test(sql)) return { rows: statement.all(...parameters), changes: 0 }
      return { rows: [], changes: Number(statement.run(...parameters).changes) }
    })
  }

  async columns(table: string): Promise<string[]> {
    const rows = await retryWhileBusy(this.#busyMs, () => this.#db.prepare(`PRAGMA table_info(${table})`).all())
    return rows.map((row) => String(row.name))
  }

  async createTables(statements: readonly string[]): Promise<void> {
    for (const statement of statements) await this.query(statement)
  }

  isUniqueViolation(error: unknown): boolean {
    return isConstraint(error)
  }

  /** Still locked at the deadline (a FloeError from query) or busy: SQLite ran nothing. */
  neverApplied(error: unknown): boolean {
    return error instanceof FloeError || isBusy(error)
  }

  failure(error: unknown, what: string): FloeError {
    if (error instanceof FloeError) return error
    return new FloeError('CATALOG_UNAVAILABLE', `${what}: SQLite failed`, { cause: error })
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close()
  }
}

// The SQL catalog on a PostgreSQL server, through node-postgres (pg): a small pool of connections,
// `?` placeholders rewritten to PostgreSQL's `$n`, and PostgreSQL's answers read into Floe's error
// taxonomy: a server that cannot be reached (or is starting, stopping, full) is CATALOG_UNAVAILABLE
// and retried; a server that refuses Floe (a wrong password, an unknown user, a database that does
// not exist, no privilege) is CATALOG_REFUSED, which asking again cannot fix.
import pg from 'pg'
import { FloeError } from '../errors.ts'
import type { SqlDatabase, SqlResult, SqlValue } from './sql-database.ts'

export interface PostgresConnection {
  host: string
  port: number
  database: string
  user: string
  /** From FLOE_CATALOG__PASSWORD or catalog.passwordFile; unset for a server that trusts the user. */
  password?: string
  /** How long opening a connection may take. Default 10 s. */
  connectTimeoutMs?: number
  /** How long one statement may wait for its answer; a commit without one is an unknown outcome. Default 30 s. */
  queryTimeoutMs?: number
}

/** `user@host:port/database`: how logs and errors name the server (never with the password). */
export function formatPostgres(connection: Pick<PostgresConnection, 'host' | 'port' | 'database' | 'user'>): string {
  return `${connection.user}@${connection.host}:${connection.port}/${connection.database}`
}

export type PostgresFailureKind = 'refused' | 'unavailable' | 'statement'

/** The SQLSTATE of an error the server sent (a socket error's code, EPIPE say, is no SQLSTATE). */
function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' ? error.code : undefined
}

/**
 * What a failure from node-postgres means for Floe. `refused`: the server answered and will not
 * let Floe in (28xxx authentication, 3D000 no such database, 42501 no privilege), or it asked for
 * a password none was configured for. `unavailable`: no answer, or a server that cannot serve now
 * (08xxx connection, 57Pxx shutting down or starting, 53xxx out of connections or resources).
 * `statement`: the server ran the statement and refused it (any other SQLSTATE).
 */
export function classifyPostgresFailure(error: unknown): PostgresFailureKind {
  const state = sqlState(error)
  if (state !== undefined) {
    if (state.startsWith('28') || state === '3D000' || state === '42501') return 'refused'
    if (state.startsWith('08') || state.startsWith('57P') || state.startsWith('53')) return 'unavailable'
    return 'statement'
  }
  const message = error instanceof Error ? error.message : String(error)
  if (/client password must be a string/.test(message)) return 'refused'
  // No SQLSTATE: the socket failed, or node-postgres gave up waiting. Nothing answered.
  return 'unavailable'
}

/** The reason in words for an operator: PostgreSQL's own message, or what a missing password means. */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  if (/client password must be a string/.test(message))
    return 'the server asks for a password and none is configured (FLOE_CATALOG__PASSWORD or catalog.passwordFile)'
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === 'ECONNREFUSED') return 'connection refused'
  return message || String(code ?? 'no reason given')
}

function placeholders(sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}

export class PostgresDatabase implements SqlDatabase {
  readonly description: string
  readonly #pool: pg.Pool

  private constructor(pool: pg.Pool, connection: PostgresConnection) {
    this.#pool = pool
    this.description = `postgresql ${formatPostgres(connection)}`
  }

  /** Connects once, so a wrong password or a missing database is said at open, not at the first commit. */
  static async open(connection: PostgresConnection): Promise<PostgresDatabase> {
    const queryTimeoutMs = connection.queryTimeoutMs ?? 30_000
    const pool = new pg.Pool({
      host: connection.host,
      port: connection.port,
      database: connection.database,
      user: connection.user,
      ...(connection.password === undefined ? {} : { password: connection.password }),
      application_name: 'floe',
      max: 4,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: connection.connectTimeoutMs ?? 10_000,
      query_timeout: queryTimeoutMs,
      // The server gives up on a statement a little before the client does: its error then says
      // the statement was cancelled (so not applied) instead of leaving the outcome unknown.
      statement_timeout: Math.max(1, queryTimeoutMs - 1_000),
    })
    // An idle connection the server closed (a restart) is dropped by the pool, which connects
    // anew for the next statement; without a listener the 'error' event would end the process.
    pool.on('error', () => {})
    const database = new PostgresDatabase(pool, connection)
    try {
      await database.query('SELECT 1')
      return database
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
  }

  async query(sql: string, parameters: readonly SqlValue[] = []): Promise<SqlResult> {
    let client: pg.PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      // Nothing was sent: the statement certainly did not run.
      throw this.failure(error, 'connect')
    }
    try {
      const result = await client.query(placeholders(sql), [...parameters])
      client.release()
      return { rows: result.rows as Record<string, unknown>[], changes: result.rowCount ?? 0 }
    } catch (error) {
      // A connection that failed is not given back to the pool for the next statement.
      client.release(sqlState(error) === undefined ? (error as Error) : undefined)
      throw error
    }
  }

  async columns(table: string): Promise<string[]> {
    const { rows } = await this.query(
      'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
      [table],
    )
    return rows.map((row) => String(row.column_name))
  }

  async createTables(statements: readonly string[]): Promise<void> {
    for (const statement of statements) {
      try {
        await this.query(statement)
      } catch (error) {
        // Two workers creating the same table at once: PostgreSQL's IF NOT EXISTS can still meet
        // the other's half-made catalog entry (23505 on pg_type, or 42P07). Once is enough.
        const state = sqlState(error)
        if (state !== '23505' && state !== '42P07') throw error
        await this.query(statement)
      }
    }
  }

  isUniqueViolation(error: unknown): boolean {
    return sqlState(error) === '23505'
  }

  neverApplied(error: unknown): boolean {
    if (error instanceof FloeError) return true
    // The server answered the statement with an error of its own: its transaction rolled back.
    // A lost connection (08), a shutdown (57P) or a crash (58, XX) may have come after the commit.
    const state = sqlState(error)
    return state !== undefined && !/^(08|57P|58|XX)/.test(state)
  }

  failure(error: unknown, what: string): FloeError {
    if (error instanceof FloeError) return error
    const kind = classifyPostgresFailure(error)
    return new FloeError(
      kind === 'refused' ? 'CATALOG_REFUSED' : 'CATALOG_UNAVAILABLE',
      `${what}: ${this.description}: ${reasonOf(error)}`,
      { cause: error, details: { reason: kind } },
    )
  }

  async close(): Promise<void> {
    await this.#pool.end()
  }
}

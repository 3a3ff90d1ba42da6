// PostgreSQL for the SQL catalog on a server (`stack up --postgres`): Debian's postgresql package
// (./dev setup installs it), a cluster made anew by initdb under .stack/postgres on every `up`,
// listening on 127.0.0.1 only (no Unix socket), password authentication (SCRAM) for everyone, a
// `floe` user owning a `floe` database, passwords made fresh each time and written to
// endpoints.json. PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres`
// system user the package creates, and initdb and the server run as that user.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { type PostgresEndpoints, paths, type StackOptions } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

const superuser = 'postgres'
const catalogUser = 'floe'
const catalogDatabase = 'floe'

/** The folder with initdb and postgres: FLOE_POSTGRES_BIN, else the newest /usr/lib/postgresql/<major>/bin. */
export function postgresBin(): string {
  const given = process.env.FLOE_POSTGRES_BIN
  if (given) return given
  const root = '/usr/lib/postgresql'
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  if (majors[0] === undefined) {
    throw new Error(`no PostgreSQL server under ${root}: run ./dev setup (apt-get install -y postgresql) as root`)
  }
  return join(root, majors[0], 'bin')
}

/** Who the cluster's files and processes belong to: the `postgres` user when we are root, else ourselves. */
function owner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) => Number(execFileSync('id', [flag, superuser], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

function layout(dir: string) {
  const root = paths(dir).postgres
  return { root, data: join(root, 'data'), passwordFile: join(root, 'superuser-password') }
}

function secret(): string {
  return randomBytes(18).toString('base64url')
}

/** The server's command line: what `up` and a restart (postgres-faults) both start. */
export function launchPostgres(options: StackOptions, dir: string): ServiceRecord {
  const { data } = layout(dir)
  const user = owner()
  return startService(dir, {
    name: 'postgres',
    command: join(postgresBin(), 'postgres'),
    args: [
      '-D',
      data,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `port=${options.ports.postgres}`,
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=100',
      '-c',
      'shared_buffers=32MB',
    ],
    ...(user ?? {}),
  })
}

/** Ready means a real connection as the superuser answers a query. */
async function answers(options: StackOptions, password: string, database = 'postgres'): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: options.ports.postgres,
    user: superuser,
    password,
    database,
    connectionTimeoutMillis: 2000,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } finally {
    await client.end().catch(() => {})
  }
}

export async function waitPostgresReady(
  options: StackOptions,
  dir: string,
  record: ServiceRecord,
  superuserPassword: string,
): Promise<void> {
  await waitReady(dir, record, () => answers(options, superuserPassword), 60_000)
}

/** A fresh cluster with the catalog's user and database; resolves once they answer. */
export async function startPostgres(
  options: StackOptions,
  dir: string,
): Promise<{ record: ServiceRecord; endpoints: PostgresEndpoints }> {
  const { root, data, passwordFile } = layout(dir)
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const user = owner()
  if (user) chownSync(root, user.uid, user.gid)
  const superuserPassword = secret()
  const password = secret()
  writeFileSync(passwordFile, `${superuserPassword}\n`, { mode: 0o600 })
  if (user) chownSync(passwordFile, user.uid, user.gid)
  execFileSync(
    join(postgresBin(), 'initdb'),
    [
      '-D',
      data,
      '-U',
      superuser,
      `--pwfile=${passwordFile}`,
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      // The cluster is made anew on every `up`: nothing to keep safe across a power cut.
      '--no-sync',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}) },
  )
  const record = launchPostgres(options, dir)
  await waitPostgresReady(options, dir, record, superuserPassword)
  const admin = new pg.Client({
    host: '127.0.0.1',
    port: options.ports.postgres,
    user: superuser,
    password: superuserPassword,
    database: 'postgres',
  })
  await admin.connect()
  try {
    // A role and database name cannot be a query parameter; both are fixed identifiers here.
    await admin.query(`CREATE ROLE ${catalogUser} LOGIN PASSWORD '${password}'`)
    await admin.query(`CREATE DATABASE ${catalogDatabase} OWNER ${catalogUser}`)
  } finally {
    await admin.end()
  }
  const host = '127.0.0.1'
  const port = options.ports.postgres
  return {
    record,
    endpoints: {
      host,
      port,
      database: catalogDatabase,
      user: catalogUser,
      password,
      uri: `postgresql://${catalogUser}@${host}:${port}/${catalogDatabase}`,
      superuser: { user: superuser, password: superuserPassword },
    },
  }
}

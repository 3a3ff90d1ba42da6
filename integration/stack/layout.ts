// Where the local stack keeps its files, which ports it uses, and the endpoints file that every
// script and test reads. Internal to integration/stack: the public surface is ./index.ts.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const stackSources = join(repoRoot, 'integration', 'stack')

/** Everything the stack writes lives under one folder, so `down` and a wipe are exact. */
export function stackDir(): string {
  return resolve(process.env.FLOE_STACK_DIR ?? join(repoRoot, '.stack'))
}

export interface StackPorts {
  /** First broker's client port; broker i listens on kafka + 2i and its controller on kafka + 2i + 1. */
  kafka: number
  /** First broker's SASL_SSL port (broker i on kafkaSecure + i), when the stack runs one. */
  kafkaSecure: number
  rest: number
  azurite: number
  /** PostgreSQL, when the stack runs one (`up --postgres`). */
  postgres: number
  /** The OAuth 2 front of the REST catalog, when the stack runs one. */
  restAuth: number
  /** The local S3 server, when the stack runs one (`up --s3`); the REST catalog on S3 takes s3 + 1. */
  s3: number
}

export interface StackOptions {
  ports: StackPorts
  brokers: 1 | 3
  /** `sasl_ssl` adds a SASL_SSL listener to every broker, beside the PLAINTEXT one. */
  kafkaSecurity: 'plaintext' | 'sasl_ssl'
  /** Whether the stack runs PostgreSQL, for the SQL catalog on a server (postgres.ts). */
  postgres: boolean
  /** Runs the OAuth 2 front of the REST catalog (./rest-auth.ts). */
  restAuth: boolean
  /** How long the front's tokens live. */
  restAuthTokenSeconds: number
  /** Also start the local S3 server (./s3.ts). */
  s3: boolean
  /**
   * The broker's group.initial.rebalance.delay.ms: how long a new group's first join waits for more
   * members. 0 (unset) keeps the tests fast; Kafka's own default is 3000.
   */
  groupJoinDelayMs?: number
}

// The SASL_SSL ports come after the six that three brokers and their controllers take.
export const defaultPorts: StackPorts = {
  kafka: 9092,
  kafkaSecure: 9098,
  rest: 8181,
  azurite: 10000,
  restAuth: 8191,
  postgres: 5432,
  s3: 9000,
}

/** How a client reaches the SASL_SSL listener: its brokers, the PEM files, the users. */
export interface KafkaSecureEndpoints {
  bootstrap: string
  brokers: string[]
  /** The CA that signed the broker's certificate and the client's. */
  caFile: string
  /** A CA that signed nothing here: trusting it alone must fail the handshake. */
  otherCaFile: string
  certFile: string
  keyFile: string
  users: { plain: { username: string; password: string }; scram: { username: string; password: string } }
}

/** How a client reaches the stack's PostgreSQL: the catalog's database and user, and the superuser. */
export interface PostgresEndpoints {
  host: string
  port: number
  database: string
  user: string
  password: string
  /** `postgresql://user@host:port/database`, without the password. */
  uri: string
  superuser: { user: string; password: string }
}

/** The OAuth 2 front of the REST catalog: its catalog URI, token endpoint and client. */
export interface RestAuthEndpoints {
  uri: string
  tokenEndpoint: string
  clientId: string
  clientSecret: string
  tokenSeconds: number
  /** GET: every token and SAS the front issued ({tokens, sas}). */
  issued: string
  /** With `--s3`: the front of the REST catalog on S3, whose loads vend the stack's S3 key. */
  s3Uri?: string
  /** With `--s3`: the same, whose loads vend each table a key of its own for its location only. */
  s3ScopedUri?: string
}

/** The local S3 server: path-style addressing, the key of the IAM user the stack made. */
export interface S3Endpoints {
  endpoint: string
  region: string
  bucket: string
  /** Where tables go in the bucket. */
  warehouse: string
  accessKeyId: string
  secretAccessKey: string
  /** A key allowed everything, IAM too: the auth front makes each table's own key with it. */
  admin: { accessKeyId: string; secretAccessKey: string }
  /** The REST catalog whose warehouse (metadata files too) is on this S3 server. */
  rest: { uri: string; warehouse: string }
}

export interface Endpoints {
  kafka: { bootstrap: string; brokers: string[]; secure?: KafkaSecureEndpoints }
  rest: { uri: string; warehouse: string; backend: { path: string; name: string } }
  restAuth?: RestAuthEndpoints
  sql: { path: string; name: string; warehouse: string }
  postgres?: PostgresEndpoints
  azurite: { connectionString: string; blobEndpoint: string; account: string; accountKey: string; container: string }
  /** When the stack was started with --s3. */
  s3?: S3Endpoints
  python: string
  verify: string
  logs: string
}

// Azurite's well-known development account (documented in Azurite's README); not a secret.
export const azuriteAccount = 'devstoreaccount1'
export const azuriteKey = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

export function brokerPorts(options: StackOptions): { client: number; controller: number }[] {
  return Array.from({ length: options.brokers }, (_, i) => ({
    client: options.ports.kafka + 2 * i,
    controller: options.ports.kafka + 2 * i + 1,
  }))
}

/** The path under the OAuth 2 front that reaches the REST catalog on S3. */
export const s3Prefix = '/s3'

/** The path under the OAuth 2 front that reaches it with a key of each table's own (s3ScopedUri). */
export const s3ScopedPrefix = '/s3-scoped'

/** The port of the REST catalog whose warehouse is on S3, beside the S3 server's. */
export function restOnS3Port(options: StackOptions): number {
  return options.ports.s3 + 1
}

export function paths(dir = stackDir()) {
  return {
    dir,
    logs: join(dir, 'logs'),
    jars: join(dir, 'jars'),
    kafka: join(dir, 'kafka'),
    tls: join(dir, 'tls'),
    rest: join(dir, 'rest'),
    restCatalog: join(dir, 'rest', 'catalog.db'),
    restS3Catalog: join(dir, 'rest-s3', 'catalog.db'),
    warehouse: join(dir, 'warehouse'),
    sqlCatalog: join(dir, 'sql', 'catalog.db'),
    sqlWarehouse: join(dir, 'sql', 'warehouse'),
    azurite: join(dir, 'azurite'),
    postgres: join(dir, 'postgres'),
    venv: join(dir, 'venv'),
    python: join(dir, 'venv', 'bin', 'python'),
    pids: join(dir, 'pids.json'),
    endpoints: join(dir, 'endpoints.json'),
  }
}

export function secureBrokers(options: StackOptions): string[] {
  return brokerPorts(options).map((_, i) => `127.0.0.1:${options.ports.kafkaSecure + i}`)
}

export function endpointsFor(
  options: StackOptions,
  dir = stackDir(),
  users?: KafkaSecureEndpoints['users'],
  restClient?: { clientId: string; clientSecret: string },
): Endpoints {
  const p = paths(dir)
  const brokers = brokerPorts(options).map((b) => `127.0.0.1:${b.client}`)
  const secure = secureBrokers(options)
  const blobEndpoint = `http://127.0.0.1:${options.ports.azurite}/${azuriteAccount}`
  return {
    kafka: {
      bootstrap: brokers.join(','),
      brokers,
      ...(options.kafkaSecurity === 'sasl_ssl' && users
        ? {
            secure: {
              bootstrap: secure.join(','),
              brokers: secure,
              caFile: join(p.tls, 'ca.pem'),
              otherCaFile: join(p.tls, 'other-ca.pem'),
              certFile: join(p.tls, 'client.pem'),
              keyFile: join(p.tls, 'client.key'),
              users,
            },
          }
        : {}),
    },
    rest: {
      uri: `http://127.0.0.1:${options.ports.rest}`,
      warehouse: `file://${p.warehouse}`,
      // The REST server's own JdbcCatalog: pyiceberg's SqlCatalog can read it directly.
      backend: { path: p.restCatalog, name: 'rest_backend' },
    },
    ...(options.restAuth && restClient
      ? {
          restAuth: {
            uri: `http://127.0.0.1:${options.ports.restAuth}`,
            tokenEndpoint: `http://127.0.0.1:${options.ports.restAuth}/v1/oauth/tokens`,
            ...restClient,
            tokenSeconds: options.restAuthTokenSeconds,
            issued: `http://127.0.0.1:${options.ports.restAuth}/_stack/issued`,
            ...(options.s3
              ? {
                  s3Uri: `http://127.0.0.1:${options.ports.restAuth}${s3Prefix}`,
                  s3ScopedUri: `http://127.0.0.1:${options.ports.restAuth}${s3ScopedPrefix}`,
                }
              : {}),
          },
        }
      : {}),
    sql: { path: p.sqlCatalog, name: 'floe', warehouse: `file://${p.sqlWarehouse}` },
    azurite: {
      connectionString: `DefaultEndpointsProtocol=http;AccountName=${azuriteAccount};AccountKey=${azuriteKey};BlobEndpoint=${blobEndpoint};`,
      blobEndpoint,
      account: azuriteAccount,
      accountKey: azuriteKey,
      container: 'warehouse',
    },
    python: p.python,
    verify: join(repoRoot, 'integration', 'verify'),
    logs: p.logs,
  }
}

/** The endpoints of a running stack, as `npm run stack -- up` wrote them. */
export function readEndpoints(dir = stackDir()): Endpoints {
  const file = paths(dir).endpoints
  if (!existsSync(file)) {
    throw new Error(`the local stack is not up (${file} is missing): run \`npm run stack -- up\``)
  }
  return JSON.parse(readFileSync(file, 'utf8')) as Endpoints
}

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
  rest: number
  azurite: number
}

export interface StackOptions {
  ports: StackPorts
  brokers: 1 | 3
}

export const defaultPorts: StackPorts = { kafka: 9092, rest: 8181, azurite: 10000 }

export interface Endpoints {
  kafka: { bootstrap: string; brokers: string[] }
  rest: { uri: string; warehouse: string; backend: { path: string; name: string } }
  sql: { path: string; name: string; warehouse: string }
  azurite: { connectionString: string; blobEndpoint: string; account: string; accountKey: string; container: string }
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

export function paths(dir = stackDir()) {
  return {
    dir,
    logs: join(dir, 'logs'),
    jars: join(dir, 'jars'),
    kafka: join(dir, 'kafka'),
    rest: join(dir, 'rest'),
    restCatalog: join(dir, 'rest', 'catalog.db'),
    warehouse: join(dir, 'warehouse'),
    sqlCatalog: join(dir, 'sql', 'catalog.db'),
    sqlWarehouse: join(dir, 'sql', 'warehouse'),
    azurite: join(dir, 'azurite'),
    venv: join(dir, 'venv'),
    python: join(dir, 'venv', 'bin', 'python'),
    pids: join(dir, 'pids.json'),
    endpoints: join(dir, 'endpoints.json'),
  }
}

export function endpointsFor(options: StackOptions, dir = stackDir()): Endpoints {
  const p = paths(dir)
  const brokers = brokerPorts(options).map((b) => `127.0.0.1:${b.client}`)
  const blobEndpoint = `http://127.0.0.1:${options.ports.azurite}/${azuriteAccount}`
  return {
    kafka: { bootstrap: brokers.join(','), brokers },
    rest: {
      uri: `http://127.0.0.1:${options.ports.rest}`,
      warehouse: `file://${p.warehouse}`,
      // The REST server's own JdbcCatalog: pyiceberg's SqlCatalog can read it directly.
      backend: { path: p.restCatalog, name: 'rest_backend' },
    },
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

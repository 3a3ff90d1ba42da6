// `npm run stack -- setup | up | down | status`: the real local stack (Kafka, Iceberg REST
// catalog, Azurite, pyiceberg) on 127.0.0.1, without Docker.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { startAzurite } from './azurite.ts'
import { setupInterop } from './interop.ts'
import { jarsReady, resolveJars } from './jars.ts'
import { startKafka } from './kafka.ts'
import { makeCertificates, newCredentials } from './kafka-security.ts'
import {
  defaultPorts,
  type Endpoints,
  endpointsFor,
  paths,
  restOnS3Port,
  type S3Endpoints,
  type StackOptions,
  stackDir,
} from './layout.ts'
import { startPostgres } from './postgres.ts'
import { running, type ServiceRecord, services, stopService } from './processes.ts'
import { pythonReady, setupPython } from './python.ts'
import { newRestClient, startRestAuth } from './rest-auth.ts'
import { restOnS3Warehouse, startRestCatalog, startRestCatalogOnS3 } from './rest-catalog.ts'
import { startS3 } from './s3.ts'

const usage = `usage: npm run stack -- <command> [options]

commands:
  setup    resolve the Kafka and Iceberg jars from Maven and create the pyiceberg venv (idempotent);
           with --interop also Spark (pyspark into the venv, Iceberg's Spark runtime jar) for
           npm run test:interop
  up       start Kafka, the Iceberg REST catalog and Azurite (and, when asked, S3, PostgreSQL,
           the REST catalog's OAuth 2 front) on 127.0.0.1; write .stack/endpoints.json
  down     stop exactly what up started, by pid
  status   show what runs and where

options (up):
  --brokers N        1 (default) or 3 Kafka brokers
  --kafka-port P     first broker's port (default 9092, env FLOE_STACK_KAFKA_PORT)
  --kafka-security S plaintext (default) or sasl_ssl (env FLOE_STACK_KAFKA_SECURITY): sasl_ssl adds a
                     SASL_SSL listener to each broker (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER; client
                     certificates required), certificates made with keytool in .stack/tls/
  --kafka-secure-port P  first broker's SASL_SSL port (default the Kafka port + 6,
                     env FLOE_STACK_KAFKA_SECURE_PORT)
  --rest-port P      REST catalog port (default 8181, env FLOE_STACK_REST_PORT)
  --azurite-port P   Azurite blob port (default 10000, env FLOE_STACK_AZURITE_PORT)
  --postgres         also start PostgreSQL for the SQL catalog (env FLOE_STACK_POSTGRES=1): a fresh
                     cluster in .stack/postgres, user and database floe
  --postgres-port P  PostgreSQL port (default 5432, env FLOE_STACK_POSTGRES_PORT)
  --rest-auth        also run the OAuth 2 front of the REST catalog (env FLOE_STACK_REST_AUTH=1):
                     client-credentials tokens that expire every few seconds, vended Azurite SAS
  --rest-auth-port P its port (default 8191, env FLOE_STACK_REST_AUTH_PORT)
  --rest-auth-token-seconds N  how long its tokens live (default 4, env FLOE_STACK_REST_AUTH_TOKEN_SECONDS)
  --s3               also start the local S3 server, moto (env FLOE_STACK_S3=1), with a bucket
                     "warehouse" and an IAM user whose key is in endpoints.json, and a second
                     REST catalog whose warehouse is on it (S3FileIO), on the S3 port + 1
  --s3-port P        S3 server port (default 9000, env FLOE_STACK_S3_PORT)
  --group-join-delay-ms N  the broker's group.initial.rebalance.delay.ms (default 0, env
                     FLOE_STACK_GROUP_JOIN_DELAY_MS; Kafka's own default is 3000): a new group's
                     first join waits this long for more members, so workers started together
                     share the partitions from the start (bench/scale.bench.ts --workers 2)

The stack keeps its files in .stack/ (FLOE_STACK_DIR to move it); logs are in .stack/logs/.`

interface Written extends Endpoints {
  options: StackOptions
}

function port(flag: string | undefined, env: string, fallback: number): number {
  const raw = flag ?? process.env[env]
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > 65535) throw new UsageError(`bad port: ${raw}`)
  return value
}

class UsageError extends Error {}

function tokenSeconds(flag: string | undefined): number {
  const raw = flag ?? process.env.FLOE_STACK_REST_AUTH_TOKEN_SECONDS ?? '4'
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`bad token lifetime: ${raw}`)
  return value
}

function groupJoinDelay(flag: string | undefined): number {
  const raw = flag ?? process.env.FLOE_STACK_GROUP_JOIN_DELAY_MS ?? '0'
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`bad group join delay: ${raw}`)
  return value
}

function options(values: Record<string, string | boolean | undefined>): StackOptions {
  const brokers = Number(values.brokers ?? 1)
  if (brokers !== 1 && brokers !== 3) throw new UsageError('--brokers takes 1 or 3')
  const kafkaSecurity = values['kafka-security'] ?? process.env.FLOE_STACK_KAFKA_SECURITY ?? 'plaintext'
  if (kafkaSecurity !== 'plaintext' && kafkaSecurity !== 'sasl_ssl')
    throw new UsageError('--kafka-security takes plaintext or sasl_ssl')
  const kafka = port(values['kafka-port'] as string | undefined, 'FLOE_STACK_KAFKA_PORT', defaultPorts.kafka)
  const secureFlag = values['kafka-secure-port'] as string | undefined
  return {
    brokers,
    kafkaSecurity,
    postgres: values.postgres === true || process.env.FLOE_STACK_POSTGRES === '1',
    s3: values.s3 === true || process.env.FLOE_STACK_S3 === '1',
    ports: {
      kafka,
      kafkaSecure: port(
        secureFlag,
        'FLOE_STACK_KAFKA_SECURE_PORT',
        kafka + defaultPorts.kafkaSecure - defaultPorts.kafka,
      ),
      rest: port(values['rest-port'] as string | undefined, 'FLOE_STACK_REST_PORT', defaultPorts.rest),
      azurite: port(values['azurite-port'] as string | undefined, 'FLOE_STACK_AZURITE_PORT', defaultPorts.azurite),
      postgres: port(values['postgres-port'] as string | undefined, 'FLOE_STACK_POSTGRES_PORT', defaultPorts.postgres),
      restAuth: port(
        values['rest-auth-port'] as string | undefined,
        'FLOE_STACK_REST_AUTH_PORT',
        defaultPorts.restAuth,
      ),
      s3: port(values['s3-port'] as string | undefined, 'FLOE_STACK_S3_PORT', defaultPorts.s3),
    },
    restAuth: values['rest-auth'] === true || process.env.FLOE_STACK_REST_AUTH === '1',
    restAuthTokenSeconds: tokenSeconds(values['rest-auth-token-seconds'] as string | undefined),
    groupJoinDelayMs: groupJoinDelay(values['group-join-delay-ms'] as string | undefined),
  }
}

function serviceNames(opts: StackOptions): string[] {
  const kafka = opts.brokers === 1 ? ['kafka'] : ['kafka-1', 'kafka-2', 'kafka-3']
  return [
    ...kafka,
    'iceberg-rest',
    'azurite',
    ...(opts.restAuth ? ['rest-auth'] : []),
    ...(opts.postgres ? ['postgres'] : []),
    ...(opts.s3 ? ['s3'] : []),
  ]
}

function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`
}

async function setup(dir: string, interop = false): Promise<void> {
  mkdirSync(dir, { recursive: true })
  for (const part of ['kafka', 'iceberg-rest'] as const) {
    const t = performance.now()
    const ran = resolveJars(part, dir)
    console.log(`${part} jars ${ran ? `resolved in ${seconds(t)}` : 'already resolved'}`)
  }
  const t = performance.now()
  const ran = setupPython(dir)
  console.log(`pyiceberg venv ${ran ? `created in ${seconds(t)}` : 'already up to date'}`)
  if (!interop) return
  const ti = performance.now()
  const did = setupInterop(dir)
  const what = [did.jars && 'the Iceberg Spark runtime jar', did.pyspark && 'pyspark'].filter(Boolean).join(' and ')
  console.log(`spark ${what ? `(${what}) installed in ${seconds(ti)}` : 'already installed'}`)
}

function readWritten(dir: string): Written | undefined {
  const file = paths(dir).endpoints
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Written) : undefined
}

async function down(dir: string): Promise<void> {
  const records = services(dir)
  const stopped = await Promise.all(records.map(async (r) => ((await stopService(dir, r.name)) ? r.name : null)))
  rmSync(paths(dir).endpoints, { force: true })
  const names = stopped.filter((n) => n !== null)
  console.log(names.length ? `stopped ${names.join(', ')}` : 'nothing was running')
}

async function up(dir: string, opts: StackOptions): Promise<void> {
  const t0 = performance.now()
  const written = readWritten(dir)
  const same = written && JSON.stringify(written.options) === JSON.stringify(opts)
  if (same && serviceNames(opts).every((name) => running(dir, name))) {
    console.log('the stack is already up')
    printEndpoints(written)
    return
  }
  if (services(dir).length) await down(dir)
  if (!jarsReady('kafka', dir) || !jarsReady('iceberg-rest', dir) || !pythonReady(dir)) await setup(dir)
  mkdirSync(paths(dir).logs, { recursive: true })
  const started: ServiceRecord[] = []
  const users = opts.kafkaSecurity === 'sasl_ssl' ? newCredentials() : undefined
  const restClient = opts.restAuth ? newRestClient() : undefined
  if (users) {
    // Before the servers start: keytool runs synchronously and would starve their readiness probes.
    const t = performance.now()
    makeCertificates(dir)
    console.log(`kafka certificates ready in ${seconds(t)}`)
  }
  const timed = async <T extends ServiceRecord | ServiceRecord[]>(name: string, start: Promise<T>): Promise<T> => {
    const t = performance.now()
    const result = await start
    started.push(...[result].flat())
    console.log(`${name} ready in ${seconds(t)}`)
    return result
  }
  let postgres: Endpoints['postgres']
  let s3: Endpoints['s3']
  try {
    // In parallel: the two JVMs start slowly and mostly wait on class loading and the quorum.
    // allSettled: a server that fails fast must not leave `down` to run while the others are
    // still starting (they would register after it and be left running).
    const outcomes = await Promise.allSettled([
      ...(opts.postgres
        ? [
            timed(
              'postgres',
              startPostgres(opts, dir).then((started) => {
                postgres = started.endpoints
                return started.record
              }),
            ),
          ]
        : []),
      ...(opts.s3
        ? [
            (async () => {
              let server: Omit<S3Endpoints, 'rest'> | undefined
              await timed(
                's3 (moto)',
                startS3(opts, dir).then((started) => {
                  server = started.endpoints
                  return started.record
                }),
              )
              if (server === undefined) return
              await timed('iceberg rest catalog on s3', startRestCatalogOnS3(opts, dir, server))
              const rest = { uri: `http://127.0.0.1:${restOnS3Port(opts)}`, warehouse: restOnS3Warehouse(server) }
              s3 = { ...server, rest }
            })(),
          ]
        : []),
      timed('azurite', startAzurite(opts, dir)),
      timed('iceberg rest catalog', startRestCatalog(opts, dir)),
      timed(`kafka (${opts.brokers} broker${opts.brokers > 1 ? 's' : ''})`, startKafka(opts, dir, users)),
    ])
    const failed = outcomes.find((outcome) => outcome.status === 'rejected')
    if (failed) throw failed.reason
    // Last: it vends the S3 key, which exists only once the S3 server is up.
    if (restClient) await timed('rest catalog OAuth 2 front', startRestAuth(opts, dir, restClient, s3))
  } catch (error) {
    await down(dir)
    throw error
  }
  mkdirSync(paths(dir).logs, { recursive: true })
  const endpoints: Written = {
    ...endpointsFor(opts, dir, users, restClient),
    ...(postgres ? { postgres } : {}),
    ...(s3 ? { s3 } : {}),
    options: opts,
  }
  writeFileSync(paths(dir).endpoints, `${JSON.stringify(endpoints, null, 2)}\n`)
  console.log(`stack up in ${seconds(t0)}`)
  printEndpoints(endpoints)
}

function printEndpoints(e: Endpoints): void {
  console.log(`  kafka         ${e.kafka.bootstrap}${e.kafka.secure ? `  (SASL_SSL ${e.kafka.secure.bootstrap})` : ''}
  rest catalog  ${e.rest.uri}  (warehouse ${e.rest.warehouse})${e.restAuth ? `\n  rest OAuth 2  ${e.restAuth.uri}  (tokens for ${e.restAuth.tokenSeconds} s)` : ''}
  sql catalog   ${e.sql.path}  (name ${e.sql.name})
  azurite       ${e.azurite.blobEndpoint}  (container ${e.azurite.container})${e.postgres ? `\n  postgres      ${e.postgres.uri}` : ''}${e.s3 ? `\n  s3            ${e.s3.endpoint}  (bucket ${e.s3.bucket}, path style)\n  rest on s3    ${e.s3.rest.uri}  (warehouse ${e.s3.rest.warehouse})` : ''}
  pyiceberg     ${e.python}
  endpoints     ${paths().endpoints}
  logs          ${e.logs}`)
}

function status(dir: string): boolean {
  const written = readWritten(dir)
  const records = services(dir)
  if (!written && records.length === 0) {
    console.log('the stack is down')
    return false
  }
  let allUp = true
  for (const name of written ? serviceNames(written.options) : records.map((r) => r.name)) {
    const record = running(dir, name)
    allUp &&= record !== undefined
    console.log(
      `${name.padEnd(14)} ${record ? `running, pid ${record.pid}, since ${record.startedAt}` : 'not running'}`,
    )
  }
  if (written) printEndpoints(written)
  return allUp
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      brokers: { type: 'string' },
      'kafka-port': { type: 'string' },
      'kafka-security': { type: 'string' },
      'kafka-secure-port': { type: 'string' },
      'rest-port': { type: 'string' },
      'azurite-port': { type: 'string' },
      interop: { type: 'boolean' },
      postgres: { type: 'boolean' },
      'postgres-port': { type: 'string' },
      'rest-auth': { type: 'boolean' },
      'rest-auth-port': { type: 'string' },
      'rest-auth-token-seconds': { type: 'string' },
      s3: { type: 'boolean' },
      's3-port': { type: 'string' },
      'group-join-delay-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const dir = stackDir()
  const command = positionals[0]
  if (values.help || command === undefined) {
    console.log(usage)
    return command === undefined && !values.help ? 2 : 0
  }
  switch (command) {
    case 'setup':
      await setup(dir, values.interop === true)
      return 0
    case 'up':
      await up(dir, options(values))
      return 0
    case 'down':
      await down(dir)
      return 0
    case 'status':
      return status(dir) ? 0 : 3
    default:
      throw new UsageError(`unknown command: ${command}`)
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) console.error(`${error.message}\n\n${usage}`)
    else console.error(`stack: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(error instanceof UsageError ? 2 : 1)
  },
)

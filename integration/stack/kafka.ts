// Apache Kafka 4.x in KRaft mode from Maven Central jars: one combined broker+controller
// (dynamic quorum, `format --standalone`), or three on one host (static quorum) for tests that
// kill a broker. Everything listens on 127.0.0.1; with `kafkaSecurity: sasl_ssl` each broker also
// has a SASL_SSL listener (./kafka-security.ts).
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Admin } from '@platformatic/kafka'
import { classpath, javaCommand } from './jars.ts'
import { scramFormatArgs, secureListenerProperties } from './kafka-security.ts'
import { brokerPorts, type KafkaSecureEndpoints, paths, type StackOptions, stackSources } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

const log4j = `-Dlog4j2.configurationFile=${join(stackSources, 'kafka', 'log4j2.properties')}`

/** What a broker needs for its SASL_SSL listener: its certificates' folder and the users. */
interface SecureListener {
  tlsDir: string
  users: KafkaSecureEndpoints['users']
}

function serverProperties(options: StackOptions, index: number, dataDir: string, secure?: SecureListener): string {
  const ports = brokerPorts(options)
  const own = ports[index]
  if (!own) throw new Error(`no broker ${index}`)
  const single = options.brokers === 1
  const replicas = single ? 1 : 3
  const minIsr = single ? 1 : 2
  const quorum = single
    ? `controller.quorum.bootstrap.servers=127.0.0.1:${own.controller}`
    : `controller.quorum.voters=${ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controller}`).join(',')}`
  const saslSsl = secure ? `,SASL_SSL://127.0.0.1:${options.ports.kafkaSecure + index}` : ''
  return `# Written by integration/stack/kafka.ts for the local test stack.
process.roles=broker,controller
node.id=${index + 1}
${quorum}
listeners=PLAINTEXT://127.0.0.1:${own.client},CONTROLLER://127.0.0.1:${own.controller}${saslSsl}
advertised.listeners=PLAINTEXT://127.0.0.1:${own.client},CONTROLLER://127.0.0.1:${own.controller}${saslSsl}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${secure ? ',SASL_SSL:SASL_SSL' : ''}
log.dirs=${dataDir}
num.partitions=1
default.replication.factor=${replicas}
min.insync.replicas=${minIsr}
auto.create.topics.enable=false
# Internal topics sized for this cluster: with the defaults (3 replicas, min ISR 2) consumer groups
# and transactions never work on one node.
offsets.topic.replication.factor=${replicas}
offsets.topic.num.partitions=${single ? 1 : 3}
transaction.state.log.replication.factor=${replicas}
transaction.state.log.min.isr=${minIsr}
transaction.state.log.num.partitions=${single ? 1 : 3}
share.coordinator.state.topic.replication.factor=${replicas}
share.coordinator.state.topic.min.isr=${minIsr}
group.initial.rebalance.delay.ms=${options.groupJoinDelayMs ?? 0}
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
${secure ? secureListenerProperties(secure.tlsDir, secure.users) : ''}`
}

/**
 * Kafka's cluster id: 16 random bytes in unpadded base64url, what `kafka-storage random-uuid` prints.
 * Like Kafka's own generator it never starts with '-': the storage tool's argument parser reads
 * such an id as an option and fails the format (one start in 64 did).
 */
export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/**
 * Starts the brokers; with `kafkaSecurity: sasl_ssl`, `users` are the SASL users to create and the
 * certificates must be made (makeCertificates) before.
 */
export async function startKafka(
  options: StackOptions,
  dir: string,
  users?: KafkaSecureEndpoints['users'],
): Promise<ServiceRecord[]> {
  const root = paths(dir).kafka
  rmSync(root, { recursive: true, force: true })
  const secure = options.kafkaSecurity === 'sasl_ssl' && users ? { tlsDir: paths(dir).tls, users } : undefined
  const id = clusterId()
  const records: ServiceRecord[] = []
  const java = javaCommand()
  const cp = classpath('kafka', dir)
  for (let i = 0; i < options.brokers; i++) {
    const nodeDir = join(root, `node${i + 1}`)
    mkdirSync(join(nodeDir, 'data'), { recursive: true })
    const props = join(nodeDir, 'server.properties')
    writeFileSync(props, serverProperties(options, i, join(nodeDir, 'data'), secure))
    const format = ['format', `--cluster-id=${id}`, '-c', props, ...(secure ? scramFormatArgs(secure.users) : [])]
    if (options.brokers === 1) format.push('--standalone')
    execFileSync(java, ['-Xmx256m', log4j, '-cp', cp, 'kafka.tools.StorageTool', ...format], {
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  }
  for (let i = 0; i < options.brokers; i++) records.push(launchBroker(options, dir, i))
  await Promise.all(records.map((record) => waitBrokerReady(options, dir, record)))
  return records
}

/** The stack's name for broker `index` (0-based). */
export function brokerName(options: StackOptions, index: number): string {
  return options.brokers === 1 ? 'kafka' : `kafka-${index + 1}`
}

/**
 * Starts broker `index` on the data folder and properties it already has: the first start formats
 * them (startKafka), a restart (integration/stack/faults.ts) keeps every topic and offset.
 */
export function launchBroker(options: StackOptions, dir: string, index: number): ServiceRecord {
  const props = join(paths(dir).kafka, `node${index + 1}`, 'server.properties')
  const heap = options.brokers === 1 ? 512 : 384
  return startService(dir, {
    name: brokerName(options, index),
    command: javaCommand(),
    args: [
      `-Xms${heap}m`,
      `-Xmx${heap}m`,
      '-XX:+UseSerialGC',
      '-Djava.awt.headless=true',
      log4j,
      '-cp',
      classpath('kafka', dir),
      'kafka.Kafka',
      props,
    ],
  })
}

export function waitBrokerReady(options: StackOptions, dir: string, record: ServiceRecord): Promise<void> {
  const brokers = brokerPorts(options).map((p) => `127.0.0.1:${p.client}`)
  return waitReady(dir, record, () => kafkaAnswers(brokers), 120_000)
}

/**
 * Ready means the cluster answers a metadata request naming every broker and a controller: a bare
 * TCP connect succeeds before the controller quorum has elected a leader.
 */
export async function kafkaAnswers(brokers: string[]): Promise<boolean> {
  const admin = new Admin({
    clientId: 'floe-stack-probe',
    bootstrapBrokers: brokers,
    retries: 0,
    timeout: 2000,
    connectTimeout: 2000,
  })
  try {
    const metadata = await admin.metadata({ topics: [] })
    return metadata.brokers.size === brokers.length && metadata.controllerId >= 0
  } finally {
    await admin.close().catch(() => {})
  }
}

// The DatasetCoordinator on the real stack: a table through the REST catalog, a 3-partition topic,
// a control topic of the test's own, and fake participants that answer END-COMMIT with real data
// files. pyiceberg reads every table the rounds wrote. Also `floe observe` (a child process during a
// round) and `floe status` (against the table the rounds built).
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { runStatus } from '../../cli/status.ts'
import { DatasetCoordinator, type RoundResult } from '../../coordinator/index.ts'
import { ControlChannel, fileListLocation, spillFiles } from '../../protocol/index.ts'
import { type Catalog, openCatalog, type TableIdentifier } from '../../shared/catalog/index.ts'
import { parseJson } from '../../shared/json/index.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../../shared/kafka/index.ts'
import { RoutedStorage } from '../../shared/storage/index.ts'
import { createMetrics, type FloeMetrics } from '../../shared/telemetry/index.ts'
import { endpoints, stackConfigYaml, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'
import {
  emptyStatus,
  FakeParticipants,
  idOf,
  type LogLine,
  recordingLogger,
  schema,
  spec,
  WatchedProcess,
  writtenStatus,
} from './support.ts'

const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')
const connection = (): KafkaConnection => ({ brokers: endpoints().kafka.brokers, clientId: 'floe-it-coordinator' })
const RECORDS_PER_PARTITION = 22

function committed(result: RoundResult): Extract<RoundResult, { kind: 'committed' }> {
  assert.equal(
    result.kind,
    'committed',
    JSON.stringify(result, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
  )
  return result as Extract<RoundResult, { kind: 'committed' }>
}

const offsetsOf = (offsets: Array<{ partition: number; offset: bigint }>) =>
  Object.fromEntries(offsets.map(({ partition, offset }) => [partition, offset]))

describe('the dataset coordinator on the local stack', () => {
  const namespace = uniqueName('it_coord')
  const table: TableIdentifier = { namespace: [namespace], name: 'events' }
  const tableName = `${namespace}.events`
  const topic = uniqueName('it-coord-events')
  const controlTopic = uniqueName('it-coord-control')
  const groupPrefix = uniqueName('it-coord')
  const dataset = 'events'
  const group = `${groupPrefix}-${dataset}`
  const storage = new RoutedStorage({})
  const channels: ControlChannel[] = []
  const coordinators: DatasetCoordinator[] = []
  /** Every id a committed round landed, in order: the table must hold exactly these. */
  const landed: string[] = []
  let catalog: Catalog
  let admin: KafkaAdmin
  let participants: FakeParticipants
  let coordinatorA: DatasetCoordinator
  let metricsA: FloeMetrics
  let logA: { lines: LogLine[] }
  let dir: string
  let configFile: string

  const target = () => ({ catalog, storage, table, topic })
  const written = (partition: number, start: number, end: number, origin?: 'table' | 'offset-reset') =>
    writtenStatus(target(), partition, start, end, origin)
  const empty = (partition: number, at: number) => emptyStatus(topic, partition, at)
  const land = (partition: number, start: number, end: number) => {
    for (let offset = start; offset < end; offset++) landed.push(idOf(partition, offset))
  }

  async function channel(workerId: string): Promise<ControlChannel> {
    const created = new ControlChannel({
      connection: connection(),
      topic: controlTopic,
      groupPrefix,
      workerId,
      logger: recordingLogger(),
    })
    channels.push(created)
    return created
  }

  async function coordinator(workerId: string) {
    const control = await channel(workerId)
    const metrics = createMetrics({ defaultMetrics: false })
    const logger = recordingLogger()
    const created = new DatasetCoordinator({
      dataset: { name: dataset, topic },
      group,
      workerId,
      // Rounds end when a test asks (requestRound), never on the interval: no test waits on a clock.
      commitIntervalMs: 600_000,
      commitTimeoutMs: 2_000,
      failureBackoffMs: 200,
      catalog,
      storage,
      table,
      admin,
      send: (message) => control.send(message),
      logger,
      metrics,
    })
    control.register(created)
    coordinators.push(created)
    await control.start()
    await created.start()
    return { coordinator: created, metrics, logger }
  }

  /** pyiceberg found every landed id once, and nothing else. */
  function assertExactlyLanded(report: VerifyResult): void {
    assert.equal(report.error, undefined)
    assert.equal(report.rows, landed.length)
    const { expected, found, missing, duplicated, unexpected } = report.ids ?? {}
    assert.deepEqual(
      { expected, found, missing, duplicated, unexpected },
      { expected: landed.length, found: landed.length, missing: 0, duplicated: 0, unexpected: 0 },
    )
  }

  async function verify() {
    const ids = join(dir, `${landed.length}.ids`)
    await writeFile(ids, `${landed.join('\n')}\n`)
    return verifyTable(tableName, { idsFile: ids })
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-it-coordinator-'))
    catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
    await catalog.createNamespace([namespace])
    await catalog.createTable(table, schema, spec)
    admin = new KafkaAdmin(connection())
    await admin.ensureTopic(topic, 3)
    const producer = new KafkaProducer(connection())
    await producer.send(
      [0, 1, 2].flatMap((partition) =>
        Array.from({ length: RECORDS_PER_PARTITION }, (_, i) => ({
          topic,
          partition,
          value: Buffer.from(JSON.stringify({ id: idOf(partition, i) })),
        })),
      ),
    )
    await producer.close()

    const participantChannel = await channel('participants')
    participants = new FakeParticipants(participantChannel, dataset, group, (p) =>
      p < 2 ? 'participant-a' : 'participant-b',
    )
    participantChannel.register(participants)
    await participantChannel.start()
    ;({ coordinator: coordinatorA, metrics: metricsA, logger: logA } = await coordinator('coordinator-a'))

    configFile = join(dir, 'floe.yaml')
    await writeFile(
      configFile,
      `${stackConfigYaml('it-coord', { groupPrefix, controlTopic })}ingestion:
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: ${dataset}
    topic: ${topic}
    table: ${tableName}
    customMapping: {id: id, kind: kind, position: position}
    schema: {id: string, kind: string, position: long}
    badRecords: skip
`,
    )
  })

  after(async () => {
    await Promise.all(coordinators.map((c) => c.stop('test over')))
    await Promise.all(channels.map((c) => c.close()))
    await admin.deleteTopic(topic).catch(() => {})
    await admin.deleteTopic(controlTopic).catch(() => {})
    await admin.close()
    await catalog.dropTable(table, { purge: true }).catch(() => {})
    await catalog.close()
    await rm(dir, { recursive: true, force: true })
  })

  test('a round every partition answers commits their files, and its ACK names the offsets and files', {
    timeout: 60_000,
  }, async () => {
    participants.answers = [
      await written(0, 0, 10, 'offset-reset'),
      await written(1, 0, 5, 'offset-reset'),
      await written(2, 0, 7, 'offset-reset'),
    ]
    const round = committed(await coordinatorA.requestRound('test'))
    land(0, 0, 10)
    land(1, 0, 5)
    land(2, 0, 7)

    const start = await participants.start(round.commitId)
    assert.deepEqual(start.body, { type: 'StartCommit', tableOffsets: [], snapshotId: null })
    const ack = await participants.ack(round.commitId)
    assert.equal(ack.snapshotId, round.snapshotId)
    assert.deepEqual(offsetsOf(ack.committedOffsets), { 0: 10n, 1: 5n, 2: 7n })
    for (const status of participants.answers) {
      const paths = ack.committedFiles.find((f) => f.partition === status.partition)?.filePaths
      assert.deepEqual(
        paths,
        status.files.map((f) => f.filePath),
      )
    }
    assert.deepEqual(ack.rejections, [])

    const report = await verify()
    assert.equal(report.error, undefined)
    assert.equal(report.rows, 22)
    assertExactlyLanded(report)
    const summary = report.snapshots.at(-1)?.summary ?? {}
    assert.equal(summary['floe.commit-id'], round.commitId)
    assert.deepEqual(parseJson(summary[`floe.offsets.${group}`] ?? ''), { [topic]: { 0: 10, 1: 5, 2: 7 } })
    assert.equal(report.properties[`floe.offsets.${group}`], summary[`floe.offsets.${group}`])

    const records = await metricsA.recordsCommitted.get()
    assert.equal(records.values[0]?.value, 22)
    const rounds = await metricsA.rounds.get()
    assert.equal(rounds.values.find((v) => v.labels['outcome'] === 'committed')?.value, 1)
    const line = logA.lines.find((l) => l.message === 'round committed' && l.details['commitId'] === round.commitId)
    assert.ok(line, 'one log line for the round')
    assert.equal(line.details['answered'], 3)
    assert.deepEqual(line.details['missing'], [])
    assert.equal(line.details['snapshotId'], String(round.snapshotId))
    assert.equal(line.details['records'], '22')
  })

  test('a partition that does not answer within the commit timeout goes into the next round', {
    timeout: 60_000,
  }, async () => {
    participants.answers = [await written(0, 10, 15), await written(1, 5, 9)]
    const asked = Date.now()
    const partial = committed(await coordinatorA.requestRound('test'))
    assert.ok(Date.now() - asked >= 1_900, 'the round waited for the commit timeout')
    land(0, 10, 15)
    land(1, 5, 9)
    const partialAck = await participants.ack(partial.commitId)
    assert.deepEqual(offsetsOf(partialAck.committedOffsets), { 0: 15n, 1: 9n })

    participants.answers = [empty(0, 15), empty(1, 9), await written(2, 7, 12)]
    const next = committed(await coordinatorA.requestRound('test'))
    land(2, 7, 12)
    const nextAck = await participants.ack(next.commitId)
    assert.deepEqual(offsetsOf(nextAck.committedOffsets), { 2: 12n })

    const report = await verify()
    assertExactlyLanded(report)
    const partialSnapshot = report.snapshots.find((s) => s.summary['floe.commit-id'] === partial.commitId)
    assert.equal(partialSnapshot?.summary['floe.round.partial'], 'true')
    const line = logA.lines.find((l) => l.details['commitId'] === partial.commitId && l.message === 'round committed')
    assert.deepEqual(line?.details['missing'], [2])
  })

  test('a stale range is rejected, the ACK says so, and its rows do not land twice', { timeout: 60_000 }, async () => {
    participants.answers = [await written(0, 10, 15), await written(1, 9, 12), empty(2, 12)]
    const mixed = committed(await coordinatorA.requestRound('test'))
    land(1, 9, 12)
    const mixedAck = await participants.ack(mixed.commitId)
    assert.deepEqual(offsetsOf(mixedAck.committedOffsets), { 1: 12n })
    assert.deepEqual(mixedAck.rejections, [{ topic, partition: 0, reason: 'behind-table', tableOffset: 15n }])

    participants.answers = [await written(0, 12, 15), empty(1, 12), empty(2, 12)]
    const rejected = await coordinatorA.requestRound('test')
    assert.equal(rejected.kind, 'rejected')
    const rejectedAck = await participants.ack(rejected.commitId ?? '')
    assert.equal(rejectedAck.snapshotId, null)
    assert.deepEqual(rejectedAck.committedOffsets, [])
    assert.deepEqual(rejectedAck.rejections, [{ topic, partition: 0, reason: 'behind-table', tableOffset: 15n }])

    const report = await verify()
    assertExactlyLanded(report)
  })

  test('a file list spilled to storage is read back; one that cannot be read holds only its partitions back', {
    timeout: 60_000,
  }, async () => {
    const { metadata } = await catalog.loadTable(table)
    const lists: string[] = []
    participants.rewrite = async (message) => {
      const location = fileListLocation(metadata.location, message.commitId, message.sender.workerId)
      lists.push(location)
      return spillFiles(message, { storage, location, maxBytes: 0 })
    }
    try {
      participants.answers = [await written(0, 15, 16), empty(1, 12), await written(2, 12, 13)]
      const spilled = committed(await coordinatorA.requestRound('test'))
      land(0, 15, 16)
      land(2, 12, 13)
      const ack = await participants.ack(spilled.commitId)
      assert.deepEqual(offsetsOf(ack.committedOffsets), { 0: 16n, 2: 13n })
      assert.equal(lists.length, 2)

      // participant-b's list is gone before the coordinator reads it: p2 answers as an error.
      participants.rewrite = async (message) => {
        const location = fileListLocation(metadata.location, message.commitId, message.sender.workerId)
        const out = await spillFiles(message, { storage, location, maxBytes: 0 })
        if (message.sender.workerId === 'participant-b') await storage.delete(location)
        return out
      }
      participants.answers = [await written(0, 16, 17), empty(1, 12), await written(2, 13, 14)]
      const asked = Date.now()
      const held = committed(await coordinatorA.requestRound('test'))
      assert.ok(Date.now() - asked < 2_000, 'an error answer counts as answered: no wait for the timeout')
      land(0, 16, 17)
      const heldAck = await participants.ack(held.commitId)
      assert.deepEqual(offsetsOf(heldAck.committedOffsets), { 0: 17n })
      const warning = logA.lines.find((l) => l.details['commitId'] === held.commitId && l.level === 'warn')
      assert.equal(warning?.details['code'], 'STORAGE_NOT_FOUND')
    } finally {
      participants.rewrite = undefined
    }
    // p2 [13, 14) goes into the next round, as a participant would report it again.
    participants.answers = [empty(0, 17), empty(1, 12), await written(2, 13, 14)]
    const again = committed(await coordinatorA.requestRound('test'))
    land(2, 13, 14)
    assert.deepEqual(offsetsOf((await participants.ack(again.commitId)).committedOffsets), { 2: 14n })
    assertExactlyLanded(await verify())
  })

  test('floe observe prints each message of a round and its summary as JSON lines', { timeout: 90_000 }, async () => {
    const observe = new WatchedProcess(floe, ['observe', '--json', '--config', configFile])
    try {
      await observe.line('stderr', 'observe to join the control topic', (l) => l.includes('watching'))
      // This round started before observe joined: its messages are shown, but it gets no summary.
      participants.answers = [await written(0, 17, 18), empty(1, 12), empty(2, 14)]
      const unseen = committed(await coordinatorA.requestRound('observe'))
      land(0, 17, 18)
      participants.answers = [await written(0, 18, 19), empty(1, 12), await written(2, 14, 15)]
      const seen = committed(await coordinatorA.requestRound('observe'))
      land(0, 18, 19)
      land(2, 14, 15)

      const summaryText = await observe.line(
        'stdout',
        'the summary of the observed round',
        (l) => l.includes(`"kind":"round","time"`) && l.includes(seen.commitId),
      )
      const summary = parseJson(summaryText) as Record<string, unknown>
      assert.equal(summary['outcome'], 'committed')
      assert.equal(summary['snapshotId'], seen.snapshotId)
      assert.equal(summary['coordinator'], 'coordinator-a')
      assert.deepEqual(summary['answered'], [
        { worker: 'participant-a', partitions: [0, 1] },
        { worker: 'participant-b', partitions: [2] },
      ])
      assert.deepEqual(summary['missing'], [])
      const phases = summary['phasesMs'] as Record<string, number>
      for (const phase of ['startToEnd', 'endToLastStatus', 'lastStatusToAck']) assert.ok(phases[phase]! >= 0, phase)

      const lines = observe.stdout.map((l) => parseJson(l) as Record<string, unknown>)
      const ofSeen = lines.filter((l) => l['commitId'] === seen.commitId && l['kind'] === 'message')
      assert.deepEqual(
        ofSeen.map((l) => `${l['type']} ${l['sender']}`),
        [
          'StartCommit coordinator-a',
          'EndCommit coordinator-a',
          'WriteStatus participant-a',
          'WriteStatus participant-b',
          'CommitAcked coordinator-a',
        ],
      )
      const status = ofSeen[3] as { partitions: Array<Record<string, unknown>> }
      assert.deepEqual(status.partitions[0]?.['range'], [14, 15])
      assert.equal(status.partitions[0]?.['records'], 1)
      assert.ok(lines.some((l) => l['commitId'] === unseen.commitId && l['type'] === 'CommitAcked'))
      assert.ok(!lines.some((l) => l['kind'] === 'round' && l['commitId'] === unseen.commitId))
    } finally {
      observe.child.kill('SIGINT')
    }
    assert.equal(await observe.exited, 0, observe.stderr.join('\n'))
  })

  test('two coordinators at once: one wins each conflicting round, and no row lands twice', {
    timeout: 120_000,
  }, async () => {
    const { coordinator: coordinatorB } = await coordinator('coordinator-b')
    const next = { 0: 19, 1: 12, 2: 15 }
    for (let race = 0; race < 3; race++) {
      participants.answers = [
        await written(0, next[0], next[0] + 1),
        await written(1, next[1], next[1] + 1),
        await written(2, next[2], next[2] + 1),
      ]
      const results = await Promise.all([coordinatorA.requestRound('race'), coordinatorB.requestRound('race')])
      assert.deepEqual(results.map((r) => r.kind).sort(), ['committed', 'rejected'], `race ${race}`)
      for (const p of [0, 1, 2] as const) land(p, next[p], next[p] + 1)
      for (const p of [0, 1, 2] as const) next[p]++
      const loser = results.find((r) => r.kind === 'rejected')
      const loserAck = await participants.ack(loser?.commitId ?? '')
      assert.deepEqual(
        loserAck.rejections.map((r) => [r.partition, r.reason, r.tableOffset]),
        [
          [0, 'behind-table', BigInt(next[0])],
          [1, 'behind-table', BigInt(next[1])],
          [2, 'behind-table', BigInt(next[2])],
        ],
      )
    }
    await coordinatorB.stop('race over')
    assert.equal((await coordinatorB.requestRound('after stop')).kind, 'stopped')

    const report = await verify()
    assertExactlyLanded(report)
  })

  test('floe status shows each partition against the topic end, and the last commit', { timeout: 60_000 }, async () => {
    const out: string[] = []
    const err: string[] = []
    const io = { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } }
    assert.equal(await runStatus(configFile, { json: true, ...io }), 0, err.join(''))
    const document = parseJson(out.join('')) as { datasets: Array<Record<string, unknown>> }
    const status = document.datasets[0] ?? {}
    assert.equal(status['table'], tableName)
    assert.equal(status['group'], group)
    assert.equal(status['partitionCount'], 3)
    assert.deepEqual(status['partitions'], [
      { partition: 0, tableOffset: 22, endOffset: 22, lag: 0 },
      { partition: 1, tableOffset: 15, endOffset: 22, lag: 7 },
      { partition: 2, tableOffset: 18, endOffset: 22, lag: 4 },
    ])
    assert.equal(status['totalLag'], 11)
    const last = status['lastCommit'] as Record<string, unknown>
    const report = await verifyTable(tableName)
    const newest = report.snapshots.at(-1)
    assert.equal(String(last['snapshotId']), newest?.id)
    assert.equal(last['commitId'], newest?.summary['floe.commit-id'])

    out.length = 0
    assert.equal(await runStatus(configFile, io), 0)
    const human = out.join('')
    assert.match(
      human,
      new RegExp(`dataset ${dataset} {2}topic ${topic} \\(3 partition\\(s\\)\\) {2}table ${tableName}`),
    )
    assert.match(human, /last commit: snapshot \d+ round [0-9a-f-]{36} at .* ago\)/)
    assert.match(human, /\n {2}1 +15 +22 +7\n/)
    assert.match(human, /total lag 11/)
  })

  test('floe status names a server it cannot reach in one line and exits 1', { timeout: 60_000 }, async () => {
    const cases = [
      {
        env: 'kafka',
        yaml: (text: string) => text.replace(endpoints().kafka.bootstrap, '127.0.0.1:1'),
        expect: /^floe status: kafka 127\.0\.0\.1:1: connection refused\n$/,
      },
      {
        env: 'catalog',
        yaml: (text: string) => text.replace(endpoints().rest.uri, 'http://127.0.0.1:2'),
        expect: /^floe status: catalog http:\/\/127\.0\.0\.1:2: connection refused\n$/,
      },
    ]
    const { readFile } = await import('node:fs/promises')
    const original = await readFile(configFile, 'utf8')
    for (const { env, yaml, expect } of cases) {
      const file = join(dir, `${env}.yaml`)
      await writeFile(file, yaml(original))
      const err: string[] = []
      const code = await runStatus(file, {
        stdout: { write: () => true },
        stderr: { write: (t: string) => err.push(t) },
        timeoutMs: 10_000,
      })
      assert.equal(code, 1, env)
      assert.match(err.join(''), expect)
    }
  })

  test('a stopped coordinator starts again and runs rounds', { timeout: 60_000 }, async () => {
    await coordinatorA.stop('revoked')
    assert.equal((await coordinatorA.nextRound()).kind, 'stopped')
    await coordinatorA.start()
    participants.answers = [empty(0, 22), empty(1, 15), empty(2, 18)]
    const round = await coordinatorA.requestRound('restarted')
    assert.equal(round.kind, 'empty')
    const ack = await participants.ack(round.commitId ?? '')
    assert.equal(ack.snapshotId, null)
    const gauge = await metricsA.coordinatorActive.get()
    assert.equal(gauge.values[0]?.value, 1)
  })
})

// The DatasetCoordinator on the real stack: a table through the REST catalog, a 3-partition topic,
// a control topic of the test's own, and fake participants that answer END-COMMIT with real data
// files. pyiceberg reads every table the rounds wrote. Also `floe observe` (a child process during a
// round) and `floe status`. Each test builds its own fixture (fixture.ts), so any one runs alone.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { runStatus } from '../../cli/status.ts'
import type { RoundResult } from '../../coordinator/index.ts'
import { fileListLocation, spillFiles } from '../../protocol/index.ts'
import { parseJson } from '../../shared/json/index.ts'
import { endpoints, type VerifyResult, verifyTable } from '../harness.ts'
import { type CoordinatorFixture, coordinatorFixture, RECORDS_PER_PARTITION } from './fixture.ts'
import { WatchedProcess } from './support.ts'

const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

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

/** pyiceberg found every id the fixture landed once, and nothing else. */
function assertExactlyLanded(f: CoordinatorFixture, report: VerifyResult): void {
  assert.equal(report.error, undefined)
  assert.equal(report.rows, f.landed.length)
  const { expected, found, missing, duplicated, unexpected } = report.ids ?? {}
  const count = f.landed.length
  assert.deepEqual(
    { expected, found, missing, duplicated, unexpected },
    { expected: count, found: count, missing: 0, duplicated: 0, unexpected: 0 },
  )
}

describe('the dataset coordinator on the local stack', () => {
  test('a round every partition answers commits their files, and its ACK names the offsets and files', {
    timeout: 60_000,
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants, group, topic } = f
    participants.answers = [
      await f.written(0, 0, 10, 'offset-reset'),
      await f.written(1, 0, 5, 'offset-reset'),
      await f.written(2, 0, 7, 'offset-reset'),
    ]
    const round = committed(await f.a.coordinator.requestRound('test'))
    f.land(0, 0, 10)
    f.land(1, 0, 5)
    f.land(2, 0, 7)

    const start = await participants.start(round.commitId)
    assert.deepEqual(start.body, { type: 'StartCommit', tableOffsets: [], snapshotId: null })
    const ack = await participants.ack(round.commitId)
    assert.equal(ack.snapshotId, round.snapshotId)
    assert.deepEqual(offsetsOf(ack.committedOffsets), { 0: 10n, 1: 5n, 2: 7n })
    for (const status of participants.answers) {
      const paths = ack.committedFiles.find((c) => c.partition === status.partition)?.filePaths
      assert.deepEqual(
        paths,
        status.files.map((file) => file.filePath),
      )
    }
    assert.deepEqual(ack.rejections, [])

    const report = await f.verify()
    assert.equal(report.error, undefined)
    assert.equal(report.rows, 22)
    assertExactlyLanded(f, report)
    const summary = report.snapshots.at(-1)?.summary ?? {}
    assert.equal(summary['floe.commit-id'], round.commitId)
    assert.deepEqual(parseJson(summary[`floe.offsets.${group}`] ?? ''), { [topic]: { 0: 10, 1: 5, 2: 7 } })
    assert.equal(report.properties[`floe.offsets.${group}`], summary[`floe.offsets.${group}`])

    const records = await f.a.metrics.recordsCommitted.get()
    assert.equal(records.values[0]?.value, 22)
    const rounds = await f.a.metrics.rounds.get()
    assert.equal(rounds.values.find((v) => v.labels['outcome'] === 'committed')?.value, 1)
    const line = f.a.logger.lines.find(
      (l) => l.message === 'round committed' && l.details['commitId'] === round.commitId,
    )
    assert.ok(line, 'one log line for the round')
    assert.equal(line.details['answered'], 3)
    assert.deepEqual(line.details['missing'], [])
    assert.equal(line.details['snapshotId'], String(round.snapshotId))
    assert.equal(line.details['records'], '22')
  })

  test("a round's commit and its ACK are held for the record loops to let go first", { timeout: 60_000 }, async (t) => {
    const f = await coordinatorFixture(t)
    f.participants.answers = [
      await f.written(0, 0, 10, 'offset-reset'),
      await f.written(1, 0, 5, 'offset-reset'),
      await f.written(2, 0, 7, 'offset-reset'),
    ]
    // A record loop's turns, as fast as the event loop lets them come: none waits before the
    // commit begins, and the first that does resumes only once the round is committed and acked.
    const turn = f.roundFirst.turn(60_000)
    let outcome: RoundResult | undefined
    const round = f.a.coordinator.requestRound('test').then((result) => {
      outcome = result
      return result
    })
    while (!(await turn())) await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(outcome?.kind, 'committed', 'the turn let the whole commit go first')
    const ack = await f.participants.ack(committed(await round).commitId)
    assert.deepEqual(offsetsOf(ack.committedOffsets), { 0: 10n, 1: 5n, 2: 7n })
    assert.equal(await turn(), false, 'nothing is held once the round is over')
  })

  test('a partition that does not answer within the commit timeout goes into the next round', {
    timeout: 60_000,
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants } = f
    participants.answers = [await f.written(0, 0, 5, 'offset-reset'), await f.written(1, 0, 4, 'offset-reset')]
    const asked = Date.now()
    const partial = committed(await f.a.coordinator.requestRound('test'))
    assert.ok(Date.now() - asked >= 1_900, 'the round waited for the commit timeout')
    f.land(0, 0, 5)
    f.land(1, 0, 4)
    const partialAck = await participants.ack(partial.commitId)
    assert.deepEqual(offsetsOf(partialAck.committedOffsets), { 0: 5n, 1: 4n })

    participants.answers = [f.empty(0, 5), f.empty(1, 4), await f.written(2, 0, 5, 'offset-reset')]
    const next = committed(await f.a.coordinator.requestRound('test'))
    f.land(2, 0, 5)
    const nextAck = await participants.ack(next.commitId)
    assert.deepEqual(offsetsOf(nextAck.committedOffsets), { 2: 5n })

    const report = await f.verify()
    assertExactlyLanded(f, report)
    const partialSnapshot = report.snapshots.find((s) => s.summary['floe.commit-id'] === partial.commitId)
    assert.equal(partialSnapshot?.summary['floe.round.partial'], 'true')
    const line = f.a.logger.lines.find(
      (l) => l.details['commitId'] === partial.commitId && l.message === 'round committed',
    )
    assert.deepEqual(line?.details['missing'], [2])
  })

  test('a stale range is rejected, the ACK says so, and its rows do not land twice', { timeout: 60_000 }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants, topic } = f
    // The table holds p0 [0, 5) and p1 [0, 3): p0 [0, 5) again is a replay of a committed range.
    await f.seed({ 0: 5, 1: 3 })
    participants.answers = [await f.written(0, 0, 5), await f.written(1, 3, 6), f.empty(2, 0)]
    const mixed = committed(await f.a.coordinator.requestRound('test'))
    f.land(1, 3, 6)
    const mixedAck = await participants.ack(mixed.commitId)
    assert.deepEqual(offsetsOf(mixedAck.committedOffsets), { 1: 6n })
    assert.deepEqual(mixedAck.rejections, [{ topic, partition: 0, reason: 'behind-table', tableOffset: 5n }])

    participants.answers = [await f.written(0, 2, 5), f.empty(1, 6), f.empty(2, 0)]
    const rejected = await f.a.coordinator.requestRound('test')
    assert.equal(rejected.kind, 'rejected')
    const rejectedAck = await participants.ack(rejected.commitId ?? '')
    assert.equal(rejectedAck.snapshotId, null)
    assert.deepEqual(rejectedAck.committedOffsets, [])
    assert.deepEqual(rejectedAck.rejections, [{ topic, partition: 0, reason: 'behind-table', tableOffset: 5n }])

    assertExactlyLanded(f, await f.verify())
  })

  test('a file list spilled to storage is read back; one that cannot be read holds only its partitions back', {
    timeout: 60_000,
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants, storage } = f
    const { metadata } = await f.catalog.loadTable(f.table)
    const lists: string[] = []
    participants.rewrite = async (message) => {
      const location = fileListLocation(metadata.location, message.commitId, message.sender.workerId)
      lists.push(location)
      return spillFiles(message, { storage, location, maxBytes: 0 })
    }
    try {
      participants.answers = [
        await f.written(0, 0, 1, 'offset-reset'),
        f.empty(1, 0),
        await f.written(2, 0, 1, 'offset-reset'),
      ]
      const spilled = committed(await f.a.coordinator.requestRound('test'))
      f.land(0, 0, 1)
      f.land(2, 0, 1)
      const ack = await participants.ack(spilled.commitId)
      assert.deepEqual(offsetsOf(ack.committedOffsets), { 0: 1n, 2: 1n })
      assert.equal(lists.length, 2)

      // participant-b's list is gone before the coordinator reads it: p2 answers as an error.
      participants.rewrite = async (message) => {
        const location = fileListLocation(metadata.location, message.commitId, message.sender.workerId)
        const out = await spillFiles(message, { storage, location, maxBytes: 0 })
        if (message.sender.workerId === 'participant-b') await storage.delete(location)
        return out
      }
      participants.answers = [await f.written(0, 1, 2), f.empty(1, 0), await f.written(2, 1, 2)]
      const asked = Date.now()
      const held = committed(await f.a.coordinator.requestRound('test'))
      assert.ok(Date.now() - asked < 2_000, 'an error answer counts as answered: no wait for the timeout')
      f.land(0, 1, 2)
      const heldAck = await participants.ack(held.commitId)
      assert.deepEqual(offsetsOf(heldAck.committedOffsets), { 0: 2n })
      const warning = f.a.logger.lines.find((l) => l.details['commitId'] === held.commitId && l.level === 'warn')
      assert.equal(warning?.details['code'], 'STORAGE_NOT_FOUND')
    } finally {
      participants.rewrite = undefined
    }
    // p2 [1, 2) goes into the next round, as a participant would report it again.
    participants.answers = [f.empty(0, 2), f.empty(1, 0), await f.written(2, 1, 2)]
    const again = committed(await f.a.coordinator.requestRound('test'))
    f.land(2, 1, 2)
    assert.deepEqual(offsetsOf((await participants.ack(again.commitId)).committedOffsets), { 2: 2n })
    assertExactlyLanded(f, await f.verify())
  })

  test('floe observe prints each message of a round and its summary as JSON lines', { timeout: 90_000 }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants } = f
    const observe = new WatchedProcess(floe, ['observe', '--json', '--config', f.configFile])
    try {
      await observe.line('stderr', 'observe to join the control topic', (l) => l.includes('watching'))
      // This round started before observe joined: its messages are shown, but it gets no summary.
      participants.answers = [await f.written(0, 0, 1, 'offset-reset'), f.empty(1, 0), f.empty(2, 0)]
      const unseen = committed(await f.a.coordinator.requestRound('observe'))
      f.land(0, 0, 1)
      participants.answers = [await f.written(0, 1, 2), f.empty(1, 0), await f.written(2, 0, 1, 'offset-reset')]
      const seen = committed(await f.a.coordinator.requestRound('observe'))
      f.land(0, 1, 2)
      f.land(2, 0, 1)

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
      assert.deepEqual(status.partitions[0]?.['range'], [0, 1])
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
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants } = f
    await f.seed({ 0: 3, 1: 2, 2: 1 })
    const coordinatorA = f.a.coordinator
    const { coordinator: coordinatorB } = await f.coordinator('coordinator-b')
    const next = { 0: 3, 1: 2, 2: 1 }
    for (let race = 0; race < 3; race++) {
      participants.answers = [
        await f.written(0, next[0], next[0] + 1),
        await f.written(1, next[1], next[1] + 1),
        await f.written(2, next[2], next[2] + 1),
      ]
      const results = await Promise.all([coordinatorA.requestRound('race'), coordinatorB.requestRound('race')])
      assert.deepEqual(results.map((r) => r.kind).sort(), ['committed', 'rejected'], `race ${race}`)
      for (const p of [0, 1, 2] as const) f.land(p, next[p], next[p] + 1)
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

    assertExactlyLanded(f, await f.verify())
  })

  test('floe status shows each partition against the topic end, and the last commit', {
    timeout: 60_000,
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const { configFile, dataset, group, tableName, topic } = f
    await f.seed({ 0: RECORDS_PER_PARTITION, 1: 15, 2: 18 })
    const out: string[] = []
    const err: string[] = []
    const io = {
      stdout: { write: (text: string) => out.push(text) },
      stderr: { write: (text: string) => err.push(text) },
    }
    assert.equal(await runStatus(configFile, { json: true, ...io }), 0, err.join(''))
    const document = parseJson(out.join('')) as { datasets: Array<Record<string, unknown>> }
    const status = document.datasets[0] ?? {}
    assert.equal(status['table'], tableName)
    assert.equal(status['group'], group)
    assert.equal(status['partitionCount'], 3)
    // no worker runs: the group holds nothing
    assert.deepEqual(status['partitions'], [
      { partition: 0, tableOffset: 22, endOffset: 22, lag: 0, heldBy: null },
      { partition: 1, tableOffset: 15, endOffset: 22, lag: 7, heldBy: null },
      { partition: 2, tableOffset: 18, endOffset: 22, lag: 4, heldBy: null },
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
    assert.match(human, /\n {2}1 +15 +22 +7 {2}-\n/)
    assert.match(human, /consumer group: \w+, no worker is running/)
    assert.match(human, /total lag 11/)
  })

  test('floe status names a server it cannot reach in one line and exits 1', { timeout: 60_000 }, async (t) => {
    const f = await coordinatorFixture(t)
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
    const original = await readFile(f.configFile, 'utf8')
    for (const { env, yaml, expect } of cases) {
      const file = join(f.dir, `${env}.yaml`)
      await writeFile(file, yaml(original))
      const err: string[] = []
      const code = await runStatus(file, {
        stdout: { write: () => true },
        stderr: { write: (text: string) => err.push(text) },
        timeoutMs: 10_000,
      })
      assert.equal(code, 1, env)
      assert.match(err.join(''), expect)
    }
  })

  test('a stopped coordinator starts again and runs rounds', { timeout: 60_000 }, async (t) => {
    const f = await coordinatorFixture(t)
    const { participants } = f
    const coordinatorA = f.a.coordinator
    await coordinatorA.stop('revoked')
    assert.equal((await coordinatorA.nextRound()).kind, 'stopped')
    await coordinatorA.start()
    participants.answers = [f.empty(0, 0), f.empty(1, 0), f.empty(2, 0)]
    const round = await coordinatorA.requestRound('restarted')
    assert.equal(round.kind, 'empty')
    const ack = await participants.ack(round.commitId ?? '')
    assert.equal(ack.snapshotId, null)
    const gauge = await f.a.metrics.coordinatorActive.get()
    assert.equal(gauge.values[0]?.value, 1)
  })
})

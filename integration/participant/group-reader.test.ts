// The participant's consumer-group seam (shared/kafka GroupReader) on the real broker: the
// regression of a commit that lands while the group rebalances. The client then rejoins by itself
// from the commit path, with the protocols given at construction; before the fix those were its
// default (roundrobin), which the broker refuses against cooperative-sticky members (or which
// switches the protocol of a group of one). That a member's rebalance() makes a Stable group
// rebalance without moving a partition, and that a member joining another moves partitions once.
// And that one member reads several topics.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { GroupReader, KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { uniqueName } from '../harness.ts'
import { connection } from './support.ts'

describe('GroupReader on the local broker', () => {
  let admin: KafkaAdmin
  before(() => {
    admin = new KafkaAdmin(connection('floe-it-group-reader'))
  })
  after(() => admin.close())

  test('a group offset commit during a rebalance rejoins with cooperative-sticky and succeeds', async () => {
    const topic = uniqueName('it_group_reader')
    await admin.ensureTopic(topic, 2)
    const settings = { groupId: `floe-it-${topic}`, topic, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 3000 }
    const first = new GroupReader(connection('floe-it-group-reader-a'), settings)
    const second = new GroupReader(connection('floe-it-group-reader-b'), settings)
    try {
      await first.join()
      assert.deepEqual(first.assigned(), [0, 1])
      let joined = false
      const joining = second.join().then(() => {
        joined = true
      })
      // commits until the second member is in: some land while the group prepares its rebalance
      let commits = 0
      while (!joined) {
        await first.commit(new Map([[0, BigInt(commits)]]))
        commits++
      }
      await joining
      assert.ok(commits > 0)
      assert.deepEqual((await first.committed([0])).get(0), BigInt(commits - 1))
    } finally {
      await second.leave().catch(() => {})
      await first.leave().catch(() => {})
    }
  })

  test("a follower's rebalance() makes the group rebalance, and every member keeps its partitions", async () => {
    const topic = uniqueName('it_group_reader')
    await admin.ensureTopic(topic, 4)
    const settings = { groupId: `floe-it-${topic}`, topic, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000 }
    const leader = new GroupReader(connection('floe-it-group-reader-a'), settings)
    const follower = new GroupReader(connection('floe-it-group-reader-b'), settings)
    const held = () => [leader.assigned(), follower.assigned()]
    // Two members with two partitions each, both on the same generation: the group is Stable.
    const settle = async (what: string) => {
      for (let i = 0; i < 150; i++) {
        const [a, b] = held()
        if (a?.length === 2 && b?.length === 2 && leader.generation === follower.generation) return
        await sleep(200)
      }
      assert.fail(`${what}: ${JSON.stringify(held())}, generations ${leader.generation}/${follower.generation}`)
    }
    try {
      await leader.join()
      await follower.join()
      await settle('two members')
      const before = { generation: leader.generation, held: held() }
      follower.rebalance('test')
      for (let i = 0; i < 150 && leader.generation === before.generation; i++) await sleep(200)
      assert.ok(leader.generation > before.generation, 'rebalance() made the group rebalance')
      await settle('after the rebalance')
      assert.deepEqual(held(), before.held, 'every member kept its partitions')
    } finally {
      await follower.leave().catch(() => {})
      await leader.leave().catch(() => {})
    }
  })

  test('a member joining one that holds every partition: two move in one cooperative rebalance, and none moves twice', async () => {
    const topic = uniqueName('it_group_reader')
    await admin.ensureTopic(topic, 4)
    const settings = { groupId: `floe-it-${topic}`, topic, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000 }
    const first = new GroupReader(connection('floe-it-group-reader-a'), settings)
    const second = new GroupReader(connection('floe-it-group-reader-b'), settings)
    const readers = [first, second]
    // What each member held, polled as a participant polls (assigned() before every fetch).
    const seen: string[][] = [[], []]
    const poll = () =>
      readers.forEach((reader, i) => {
        const now = reader.assigned().join(',')
        if (seen[i]?.at(-1) !== now) seen[i]?.push(now)
      })
    const settled = () =>
      first.assigned().length === 2 && second.assigned().length === 2 && first.generation === second.generation
    try {
      await first.join()
      poll()
      const alone = first.generation
      await second.join()
      for (let i = 0; i < 300 && !settled(); i++) {
        poll()
        await sleep(50)
      }
      // three heartbeat intervals more: a join on top of the client's would rebalance again here
      for (let i = 0; i < 60; i++) {
        poll()
        await sleep(50)
      }
      assert.ok(settled(), `not settled: ${JSON.stringify(seen)}`)
      assert.equal(first.generation, alone + 2, `generations ${alone} to ${first.generation}: ${JSON.stringify(seen)}`)
      const kept = seen[0]?.at(-1) as string
      assert.deepEqual(seen[0], ['0,1,2,3', kept], 'the first member only gave partitions up')
      assert.deepEqual(seen[1]?.at(-1)?.split(',').concat(kept.split(',')).sort(), ['0', '1', '2', '3'])
      assert.ok(
        (seen[1] ?? []).every((held, i) => i === 0 || held.startsWith(seen[1]?.[i - 1] ?? '')),
        'the second only gained',
      )
    } finally {
      await second.leave().catch(() => {})
      await first.leave().catch(() => {})
    }
  })

  test('one member of several topics: each topic assigned and fetched on its own, and two members split them', async () => {
    const topics = [uniqueName('it_group_reader_a'), uniqueName('it_group_reader_b')]
    for (const topic of topics) await admin.ensureTopic(topic, 2)
    const [a = '', b = ''] = topics
    const producer = new KafkaProducer(connection('floe-it-group-reader-producer'))
    await producer.send([
      { topic: a, partition: 0, key: Buffer.from('k'), value: Buffer.from('in a') },
      { topic: b, partition: 0, key: Buffer.from('k'), value: Buffer.from('in b') },
    ])
    await producer.close()
    const settings = { groupId: `floe-it-${a}`, topics, sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000 }
    const first = new GroupReader(connection('floe-it-group-reader-a'), settings)
    const second = new GroupReader(connection('floe-it-group-reader-b'), settings)
    try {
      await first.join()
      assert.deepEqual(
        [first.assigned(a), first.assigned(b)],
        [
          [0, 1],
          [0, 1],
        ],
      )
      const read = async (topic: string) => {
        const fetched = await first.topicReader(topic).fetch(new Map([[0, 0n]]))
        return fetched.flatMap((p) => p.batches.flatMap((batch) => batch.records.map((r) => String(r.value))))
      }
      assert.deepEqual([await read(a), await read(b)], [['in a'], ['in b']])
      assert.throws(() => first.assigned(), /not told which one/)
      await second.join()
      // cooperative-sticky: four partitions over two members, two each, every one held once
      let held: number[][] = []
      for (let i = 0; i < 150; i++) {
        held = [first.assigned(a), first.assigned(b), second.assigned(a), second.assigned(b)]
        if (held.flat().length === 4 && first.generation === second.generation) break
        await sleep(200)
      }
      assert.equal(held.flat().length, 4, JSON.stringify(held))
      assert.deepEqual([...held[0]!, ...held[2]!].sort(), [0, 1])
      assert.deepEqual([...held[1]!, ...held[3]!].sort(), [0, 1])
    } finally {
      await second.leave().catch(() => {})
      await first.leave().catch(() => {})
    }
  })

  test('a subscribed topic deleted (a pattern no longer matches it): the other is read on, and joins go on', async () => {
    const kept = uniqueName('it_group_reader_kept')
    const gone = uniqueName('it_group_reader_gone')
    for (const topic of [kept, gone]) await admin.ensureTopic(topic, 2)
    const reader = new GroupReader(connection('floe-it-group-reader-a'), {
      groupId: `floe-it-${kept}`,
      topics: [kept, gone],
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 1000,
    })
    try {
      await reader.join()
      assert.deepEqual(
        [reader.assigned(kept), reader.assigned(gone)],
        [
          [0, 1],
          [0, 1],
        ],
      )
      await admin.deleteTopic(gone)
      const generation = reader.generation
      reader.rebalance('test')
      let held: number[][] = []
      for (let i = 0; i < 150; i++) {
        held = [reader.assigned(kept), reader.assigned(gone)]
        if (reader.generation > generation && held[1]?.length === 0 && !reader.lost) break
        await sleep(200)
      }
      assert.equal(reader.lost, undefined)
      assert.deepEqual(held, [[0, 1], []])
      const fetched = await reader.topicReader(kept).fetch(new Map([[0, 0n]]))
      assert.deepEqual(
        fetched.map((p) => p.error),
        [undefined],
      )
      // made again and subscribed again: assigned again
      await admin.ensureTopic(gone, 2)
      for (let i = 0; i < 150 && reader.assigned(gone).length === 0; i++) {
        reader.subscribe([kept, gone])
        await sleep(200)
      }
      assert.deepEqual(reader.assigned(gone), [0, 1])
    } finally {
      await reader.leave().catch(() => {})
    }
  })
})

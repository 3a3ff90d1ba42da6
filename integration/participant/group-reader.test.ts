// The participant's consumer-group seam (shared/kafka GroupReader) on the real broker: the
// regression of a commit that lands while the group rebalances. The client then rejoins by itself
// from the commit path, with the protocols given at construction; before the fix those were its
// default (roundrobin), which the broker refuses against cooperative-sticky members (or which
// switches the protocol of a group of one).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { GroupReader, KafkaAdmin } from '../../shared/kafka/index.ts'
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
})

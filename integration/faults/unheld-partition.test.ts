// A partition the Stable group gives to no member: read by no one, and nothing in the group
// protocol changes that until some member joins again. The state is made on purpose here: a member
// of the test's own joins the group first, so it is the group's leader and computes every
// assignment, and it leaves one partition out while the fleet joins. Then it assigns as usual, but
// no further rebalance comes by itself: the fleet's coordinator must see the partition missing
// from its rounds, find it held by no one, and make the group rebalance.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Consumer, cooperativeStickyAssigner, type GroupPartitionsAssigner } from '@platformatic/kafka'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { floeCommand } from '../cli/support.ts'
import { Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { assertExactlyOnce, badEvery, fastFleet, logged, minute } from './support.ts'

const withheld = 3

interface StatusJson {
  partitions: { partition: number; heldBy: string | null }[]
  consumerGroup: { state: string; unheldPartitions: number[] }
}
const warning = 'partitions held by no member of the Stable group: joining again so that the group assigns them'

test('a partition the Stable group gives to no member is assigned again by the coordinator', async (t) => {
  const fleet = await Fleet.create(t, fastFleet)
  let withholding = true
  // The leader's assignor: the fleet's members share every partition but the withheld one (while
  // it is withheld); the leader itself reads nothing.
  const assign: GroupPartitionsAssigner = (leaderId, members, topics, metadata) => {
    const fleetMembers = new Map([...members].filter(([memberId]) => memberId !== leaderId))
    const assignments = cooperativeStickyAssigner(leaderId, fleetMembers, topics, metadata)
    for (const member of assignments) {
      const ofTopic = member.assignments.get(fleet.topic)
      if (ofTopic && withholding) ofTopic.partitions = ofTopic.partitions.filter((p) => p !== withheld)
    }
    return [...assignments, { memberId: leaderId, assignments: new Map() }]
  }
  const leader = new Consumer({
    clientId: 'floe-it-unheld-leader',
    bootstrapBrokers: endpoints().kafka.brokers,
    groupId: fleet.group,
    autocommit: false,
    sessionTimeout: fastFleet.sessionTimeoutMs,
    heartbeatInterval: 1000,
    protocols: [{ name: 'cooperative-sticky', version: 3 }],
    partitionAssigner: assign,
  })
  t.after(() => leader.close(true).catch(() => {}))
  leader.topics.track(fleet.topic)
  await leader.joinGroup({})

  const workers = await Promise.all([fleet.start(), fleet.start()])
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'floe-it-unheld' })
  t.after(() => admin.close())
  const heldByFleet = async () => {
    const { state, members } = await admin.groupAssignment(fleet.group, fleet.topic)
    const held = members.filter((m) => m.memberId !== leader.memberId).flatMap((m) => m.partitions)
    return { state, held: held.sort((a, b) => a - b) }
  }
  let group = await heldByFleet()
  for (let i = 0; i < 60 && !(group.state === 'Stable' && group.held.length === 5); i++) {
    await sleep(1000)
    group = await heldByFleet()
  }
  assert.deepEqual(group, { state: 'Stable', held: [0, 1, 2, 4, 5] }, 'the fleet holds all but the withheld partition')
  // What an operator sees meanwhile; a worker's join may be rebalancing the group at that moment,
  // when no partition counts as unheld, so it looks again.
  let dataset: StatusJson | undefined
  for (let i = 0; i < 30 && dataset?.consumerGroup.unheldPartitions.length !== 1; i++) {
    if (i > 0) await sleep(1000)
    const status = await floeCommand(['status', '--config', fleet.config, '--json'])
    assert.equal(status.code, 0, status.stderr)
    dataset = (JSON.parse(status.stdout) as { datasets: StatusJson[] }).datasets[0]
  }
  assert.deepEqual(dataset?.consumerGroup.unheldPartitions, [withheld])
  const holders = new Set(dataset?.partitions.map((p) => p.heldBy))
  assert.deepEqual(holders, new Set([...workers.map((w) => `floe-${w.id}`), null]), 'each partition names its worker')
  withholding = false

  await fleet.produce(1200, { badEvery })
  await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  const warned = workers.flatMap((worker) => logged(worker, warning))
  assert.ok(warned.length > 0, 'the coordinator saw the unheld partition')
  assert.deepEqual(warned[0]?.unheld, [withheld])
  assert.ok((await heldByFleet()).held.includes(withheld), 'a member of the fleet holds the partition now')
})

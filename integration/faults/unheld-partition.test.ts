// A partition the Stable group gives to no member: read by no one, and nothing in the group
// protocol changes that until some member joins again. The state is made on purpose here: a member
// of the test's own joins the group first, so it is the group's leader and computes every
// assignment, and it leaves one partition out while the fleet joins. Then it assigns as usual, but
// no further rebalance comes by itself: the fleet's coordinator must see the partition missing
// from its rounds, find it held by no one, and make the group rebalance. When the partition left
// out is 0 no worker coordinates and no round comes: the workers must hear that silence, find
// partition 0 held by no one, and make the group rebalance.
import assert from 'node:assert/strict'
import { type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Consumer, cooperativeStickyAssigner, type GroupPartitionsAssigner } from '@platformatic/kafka'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { floeCommand } from '../cli/support.ts'
import { Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { assertExactlyOnce, badEvery, fastFleet, logged, minute } from './support.ts'

interface StatusJson {
  partitions: { partition: number; heldBy: string | null }[]
  consumerGroup: { state: string; unheldPartitions: number[] }
}
const warning = 'partitions held by no member of the Stable group: joining again so that the group assigns them'

/** What the workers logged when they found a partition held by no one. */
function unheldWarnings(workers: WorkerProcess[]): Record<string, unknown>[] {
  return workers.flatMap((worker) => logged(worker, warning))
}

/**
 * A member of the test's own that joins the fleet's group first, so it is the leader and computes
 * every assignment: the fleet's members share every partition but `withheld` (while it is withheld);
 * the leader itself reads nothing.
 */
async function withholdingLeader(t: TestContext, fleet: Fleet, withheld: number) {
  const state = { withholding: true }
  const assign: GroupPartitionsAssigner = (leaderId, members, topics, metadata) => {
    const fleetMembers = new Map([...members].filter(([memberId]) => memberId !== leaderId))
    const assignments = cooperativeStickyAssigner(leaderId, fleetMembers, topics, metadata)
    for (const member of assignments) {
      const ofTopic = member.assignments.get(fleet.topic)
      if (ofTopic && state.withholding) ofTopic.partitions = ofTopic.partitions.filter((p) => p !== withheld)
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
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'floe-it-unheld' })
  t.after(() => admin.close())
  const heldByFleet = async () => {
    const { state, members } = await admin.groupAssignment(fleet.group, fleet.topic)
    const held = members.filter((m) => m.memberId !== leader.memberId).flatMap((m) => m.partitions)
    return { state, held: held.sort((a, b) => a - b) }
  }
  /** Waits for the fleet to hold every partition but the withheld one, in a Stable group. */
  const allButWithheld = async () => {
    const expected = [0, 1, 2, 3, 4, 5].filter((p) => p !== withheld)
    let group = await heldByFleet()
    for (let i = 0; i < 60 && !(group.state === 'Stable' && group.held.length === expected.length); i++) {
      await sleep(1000)
      group = await heldByFleet()
    }
    assert.deepEqual(group, { state: 'Stable', held: expected }, 'the fleet holds all but the withheld partition')
  }
  return { state, heldByFleet, allButWithheld }
}

test('a partition the Stable group gives to no member is assigned again by the coordinator', async (t) => {
  const withheld = 3
  const fleet = await Fleet.create(t, fastFleet)
  const leader = await withholdingLeader(t, fleet, withheld)
  const workers = await Promise.all([fleet.start(), fleet.start()])
  await leader.allButWithheld()
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
  // A holder is a worker (`floe-w1`), or one of its members on threads (`floe-w1-0`).
  const holderOf = (heldBy: string | null) =>
    heldBy === null ? null : (workers.find((w) => new RegExp(`^floe-${w.id}(-\\d+)?$`).test(heldBy))?.id ?? heldBy)
  const holders = new Set(dataset?.partitions.map((p) => holderOf(p.heldBy)))
  assert.deepEqual(holders, new Set([...workers.map((w) => w.id), null]), 'each partition names its worker')
  // Released only once the coordinator found it held by no one: any rebalance after the release (a
  // worker's own second join of a cooperative hand-over) would assign it as well.
  await fleet.waitFor(() => unheldWarnings(workers).length > 0, minute, 'the coordinator to look at the group')
  leader.state.withholding = false

  await fleet.produce(1200, { badEvery })
  await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  const warned = unheldWarnings(workers)
  assert.ok(warned.length > 0, 'the coordinator saw the unheld partition')
  assert.deepEqual(warned[0]?.unheld, [withheld])
  assert.ok((await leader.heldByFleet()).held.includes(withheld), 'a member of the fleet holds the partition now')
})

test('partition 0 given to no member: no coordinator, and the workers that hear no round assign it again', async (t) => {
  const fleet = await Fleet.create(t, fastFleet)
  const leader = await withholdingLeader(t, fleet, 0)
  const workers = await Promise.all([fleet.start(), fleet.start()])
  await leader.allButWithheld()
  await fleet.produce(600, { badEvery })
  // No round without a coordinator: no worker runs one, and the table stays as it was.
  await sleep(5000)
  assert.ok(
    workers.every((worker) => logged(worker, 'coordinating').length === 0),
    'no worker coordinates while partition 0 is held by no one',
  )
  // Released only once a worker found it held by no one, as above.
  await fleet.waitFor(
    () => unheldWarnings(workers).length > 0,
    minute,
    'a worker that heard no round to look at the group',
  )
  leader.state.withholding = false

  await fleet.produce(600, { badEvery })
  await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  assert.deepEqual(unheldWarnings(workers)[0]?.unheld, [0])
  assert.ok((await leader.heldByFleet()).held.includes(0), 'a member of the fleet holds partition 0 now')
})

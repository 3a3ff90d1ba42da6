// `floe rewind` on the real stack, as docs/operations.md tells an operator to use it: a fleet
// ingests, is stopped, one partition is rewound to an offset in the middle (and later every
// partition to a time in the middle), the fleet starts again, and pyiceberg finds exactly the
// rewound range a second time, once, and every other record once. While a worker runs, the
// command refuses in one line and writes nothing. A dataset of two topics is rewound by a time
// and by offsets of both topics, each in one commit.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { datasetGroup } from '../../cli/servers.ts'
import { loadConfig } from '../../shared/config/index.ts'
import { Fleet } from '../e2e/fleet.ts'
import { assertCounts, floeCommand, stop } from './support.ts'

const floeRewind = (args: string[]) => floeCommand(['rewind', ...args])

test('floe rewind makes a stopped fleet read exactly the rewound range again, once, and refuses while a worker runs', async (t) => {
  const fleet = await Fleet.create(t, { partitions: 2 })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const config = ['--config', fleet.config, '--dataset', 'events']
  // Partition 0: 200 events. Partition 1: 100 events, then (after `middle`) 100 more.
  const p0 = await fleet.produce(200, { partition: 0 })
  const p1early = await fleet.produce(100, { partition: 1 })
  await sleep(1500)
  const middle = new Date().toISOString()
  await sleep(1500)
  const p1late = await fleet.produce(100, { partition: 1 })
  const expected = new Map(fleet.ids.map((id) => [id, 1]))

  let worker = await fleet.start('w1')
  await assertCounts(fleet, expected, 180_000)

  const refused = await floeRewind([...config, '--to-offset', `${fleet.topic}:0=80`])
  assert.equal(refused.code, 1, refused.stderr)
  assert.equal(refused.stdout, '')
  assert.match(
    refused.stderr,
    new RegExp(
      `^floe rewind: refused: dataset events is being read: consumer group ${group} has \\d+ active member\\(s\\) \\(.*\\); stop the dataset's workers first\\n$`,
    ),
  )

  // A dry run reads only: it runs beside a worker, and says a real rewind would be refused.
  const beside = await floeRewind([...config, '--to-offset', `${fleet.topic}:0=80`, '--dry-run'])
  assert.equal(beside.code, 0, beside.stderr)
  assert.match(beside.stdout, /a real rewind is refused now: dataset events is being read: consumer group /)

  await stop(worker, group)
  const dry = await floeRewind([...config, '--to-offset', `${fleet.topic}:0=80`, '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  assert.match(dry.stdout, /^dry run: would rewind dataset events/)
  assert.match(dry.stdout, new RegExp(`${fleet.topic} partition 0: 200 -> 80 \\(120 record\\(s\\) read again\\)`))
  assert.match(
    dry.stdout,
    new RegExp(`would write floe\\.offsets\\.${group} = \\{"${fleet.topic}":\\{"0":80,"1":200\\}\\}`),
  )

  const rewound = await floeRewind([...config, '--to-offset', `${fleet.topic}:0=80`])
  assert.equal(rewound.code, 0, rewound.stderr)
  assert.match(rewound.stdout, /^rewound dataset events \(table .*\) to the given offsets in snapshot \d+:/)
  assert.match(rewound.stdout, /consumer group .* moved too/)
  const snapshot = /in snapshot (\d+):/.exec(rewound.stdout)?.[1]
  const status = await floeCommand(['status', '--config', fleet.config])
  assert.equal(status.code, 0, status.stderr)
  assert.match(status.stdout, new RegExp(`last commit: snapshot ${snapshot} rewind [0-9a-f-]{36} at `))
  for (const id of p0.slice(80)) expected.set(id, 2)

  worker = await fleet.restart(worker)
  await assertCounts(fleet, expected, 180_000)

  // Every partition to a time in the middle: partition 1 reads its late half again; partition 0
  // has no record that late and stays where it is.
  await stop(worker, group)
  const byTime = await floeRewind([...config, '--to-timestamp', middle])
  assert.equal(byTime.code, 0, byTime.stderr)
  assert.match(byTime.stdout, new RegExp(`${fleet.topic} partition 0: 200 -> 200 \\(unchanged\\)`))
  assert.match(byTime.stdout, new RegExp(`${fleet.topic} partition 1: 200 -> 100 \\(100 record\\(s\\) read again\\)`))
  for (const id of p1late) expected.set(id, 2)

  worker = await fleet.restart(worker)
  await assertCounts(fleet, expected, 180_000)
  assert.equal(p1early.length + p1late.length + p0.length, expected.size)
  await stop(worker, group)
})

test('a dataset of several topics: one rewind moves every topic, to a time or to offsets of two topics, in one commit', async (t) => {
  const fleet = await Fleet.create(t, { partitions: 1, topicCount: 2 })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const config = ['--config', fleet.config, '--dataset', 'events']
  const [first, second] = fleet.topics as [string, string]
  // Each topic: 100 events, then (after `middle`) 50 more.
  const early = [...(await fleet.produce(100, { topic: first })), ...(await fleet.produce(100, { topic: second }))]
  await sleep(1500)
  const middle = new Date().toISOString()
  await sleep(1500)
  const lateFirst = await fleet.produce(50, { topic: first })
  const lateSecond = await fleet.produce(50, { topic: second })
  const expected = new Map(fleet.ids.map((id) => [id, 1]))

  let worker = await fleet.start('w1')
  await assertCounts(fleet, expected, 180_000)
  await stop(worker, group)

  const byTime = await floeRewind([...config, '--to-timestamp', middle])
  assert.equal(byTime.code, 0, byTime.stderr)
  for (const topic of [first, second]) {
    assert.match(byTime.stdout, new RegExp(`${topic} partition 0: 150 -> 100 \\(50 record\\(s\\) read again\\)`))
  }
  assert.match(byTime.stdout, /consumer group .* moved too/)
  for (const id of [...lateFirst, ...lateSecond]) expected.set(id, 2)
  worker = await fleet.restart(worker)
  await assertCounts(fleet, expected, 180_000)
  await stop(worker, group)

  assert.equal(early.length + lateFirst.length + lateSecond.length, expected.size)

  // Offsets of both topics in one rewind, one commit: the marker moves both (reading them again is
  // what the time's rewind above proved).
  const byOffsets = await floeRewind([...config, '--to-offset', `${second}:0=140,${first}:0=120`])
  assert.equal(byOffsets.code, 0, byOffsets.stderr)
  assert.match(byOffsets.stdout, new RegExp(`${first} partition 0: 150 -> 120 \\(30 record\\(s\\) read again\\)`))
  assert.match(byOffsets.stdout, new RegExp(`${second} partition 0: 150 -> 140 \\(10 record\\(s\\) read again\\)`))
  const after = await floeRewind([...config, '--to-offset', `${second}:0=140,${first}:0=120`, '--dry-run'])
  assert.match(after.stdout, /nothing would change/)
  assert.match(after.stdout, new RegExp(`${first} partition 0: 120 -> 120 \\(unchanged\\)`))
})

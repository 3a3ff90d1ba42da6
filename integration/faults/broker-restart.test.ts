// Floe's Kafka readers through a broker restart, one at a time.
// - The control channel: its reader used to stop for good once the client gave up fetching
//   ("fetch failed 4 times"), so every worker kept ingesting but never answered a round again,
//   and the coordinator's rounds ended with no partition answering. Now a failed reader is
//   replaced; messages sent after the broker is back arrive.
// - A dataset's group member (GroupReader): when the client's own rejoin after a heartbeat error
//   failed, it emitted 'error' with no listener, and the worker process died of it (seen in the
//   soak after broker restarts). Now the member knows it is out of the group, owns nothing, and
//   joins again; an unhandled 'error' would end this test's process.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ControlChannel, type ControlMessage } from '../../protocol/index.ts'
import { message } from '../../protocol/test-fixtures.ts'
import { GroupReader, KafkaAdmin } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { restartKafka } from './support.ts'

describe('Kafka readers through a broker restart', { concurrency: false }, () => {
  test('a control channel keeps receiving after the broker is stopped and started again', async (t) => {
    const received: ControlMessage[] = []
    const warnings: string[] = []
    const logger = {
      info: () => {},
      warn: (_: Record<string, unknown>, text: string) => warnings.push(text),
      error: (_: Record<string, unknown>, text: string) => warnings.push(text),
    }
    const channel = new ControlChannel({
      connection: { brokers: endpoints().kafka.brokers, clientId: 'floe-it-faults-control' },
      topic: uniqueName('it-faults-control'),
      groupPrefix: uniqueName('it-faults'),
      workerId: 'w',
      logger,
    })
    t.after(() => channel.close())
    channel.register({ receive: (m) => void received.push(m) })
    await channel.start()

    // Down long enough that the client's own retries run out.
    await restartKafka(t, { downMs: 6000 })
    const end = message({ type: 'EndCommit', expectedPartitions: [{ topic: 'events', partition: 0 }] })
    // The new reader joins its group and fixes its position at the end: resend until one arrives.
    const deadline = Date.now() + 60_000
    while (!received.some((m) => m.commitId === end.commitId && m.body.type === 'EndCommit')) {
      assert.ok(Date.now() < deadline, `nothing arrived after the restart; channel said: ${warnings.join(' | ')}`)
      await channel.send(end).catch(() => {})
      await sleep(1000)
    }
    t.diagnostic(`channel said: ${warnings.join(' | ') || 'nothing'}`)
  })

  test('a group member owns its partitions again after the broker is killed and started again', async (t) => {
    const connection = { brokers: endpoints().kafka.brokers, clientId: 'floe-it-faults-group' }
    const topic = uniqueName('it-faults-group')
    const admin = new KafkaAdmin(connection)
    await admin.ensureTopic(topic, 3)
    await admin.close()
    const reader = new GroupReader(connection, {
      groupId: uniqueName('it-faults-group'),
      topic,
      sessionTimeoutMs: 6000,
    })
    t.after(() => reader.leave().catch(() => {}))
    await reader.join()
    assert.deepEqual(reader.assigned(), [0, 1, 2])
    // Down past the session timeout: the member's heartbeats fail, its rejoin meets a broker that
    // is still loading the group, and the client may give up on it.
    await restartKafka(t, { hard: true, downMs: 8000 })
    const deadline = Date.now() + 90_000
    let lostOnce = false
    // Owning all three and committing an offset with its generation: a member of the group again.
    const member = () =>
      reader.assigned().length === 3 &&
      reader.commit(new Map([[0, 1n]])).then(
        () => true,
        () => false,
      )
    while (!(await member())) {
      lostOnce ||= reader.lost !== undefined
      assert.ok(Date.now() < deadline, `owns ${JSON.stringify(reader.assigned())}; lost: ${reader.lost?.message}`)
      await sleep(500)
    }
    t.diagnostic(lostOnce ? 'the client gave up its rejoin; the member joined again' : 'the client rejoined by itself')
  })
})

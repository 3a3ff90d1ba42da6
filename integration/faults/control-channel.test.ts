// The control channel through a broker restart. Its reader used to stop for good once the client
// gave up fetching ("fetch failed 4 times"), so every worker kept ingesting but never answered a
// round again, and the coordinator's rounds ended with no partition answering. Now a failed
// reader is replaced; messages sent after the broker is back arrive.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ControlChannel, type ControlMessage } from '../../protocol/index.ts'
import { message } from '../../protocol/test-fixtures.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { restartKafka } from './support.ts'

test('a control channel keeps receiving after the broker is killed and started again', async (t) => {
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
  await restartKafka(t, { hard: true, downMs: 6000 })
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

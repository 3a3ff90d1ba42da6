import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  activeFileName,
  jumpFileName,
  parseJumpFileName,
  parseWalFileName,
  partitionLogDirectory,
  readyFileName,
} from './names.ts'

const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'

test('file names read back into their parts, whatever characters the topic has', () => {
  for (const topic of ['events', 'orders_eu', 'a.b-c_d', '_', 'x_1_2-3_4', 'ready_t_0_1-2']) {
    assert.deepEqual(parseWalFileName(activeFileName(topic, 7, uuid)), { kind: 'active', topic, partition: 7, uuid })
    for (const [extension, kind] of [
      ['parquet', 'ready-parquet'],
      ['json', 'ready-json'],
    ] as const) {
      assert.deepEqual(parseWalFileName(readyFileName(topic, 12, 0n, 18446744073709551615n, uuid, extension)), {
        kind,
        topic,
        partition: 12,
        uuid,
        start: 0n,
        end: 18446744073709551615n,
      })
    }
    assert.equal(parseWalFileName(`${readyFileName(topic, 1, 5n, 6n, uuid, 'json')}.tmp`)?.kind, 'temporary')
  }
})

test('names the WAL does not make are not parsed', () => {
  for (const name of [
    'events-0',
    `active_events_0_${uuid}.json`,
    `active_events_-1_${uuid}.parquet`,
    `active_events_01_${uuid}.parquet`,
    `ready_events_0_5-5_${uuid}.parquet`,
    `ready_events_0_6-5_${uuid}.parquet`,
    `ready_events_0_05-6_${uuid}.parquet`,
    `ready_events_0_5-6_${uuid.toUpperCase()}.parquet`,
    `ready_events_0_5-6_${uuid}.parquet.tmp`,
    `ready__0_5-6_${uuid}.parquet`,
  ]) {
    assert.equal(parseWalFileName(name), undefined, name)
  }
})

test('a jump marker names the partition and the jump, and is no other kind of WAL file', () => {
  for (const topic of ['events', 'x_1_2-3_4', 'jump_t_0_1-2']) {
    const name = jumpFileName(topic, 3, { from: 7n, to: 18446744073709551615n })
    assert.deepEqual(parseJumpFileName(name), { topic, partition: 3, jump: { from: 7n, to: 18446744073709551615n } })
    assert.equal(parseWalFileName(name), undefined)
  }
  for (const name of [
    'jump_events_0_5-5',
    'jump_events_0_6-5',
    'jump_events_0_05-6',
    'jump__0_5-6',
    'jump_events_0_5-6.json',
  ]) {
    assert.equal(parseJumpFileName(name), undefined, name)
  }
  assert.equal(parseJumpFileName(readyFileName('events', 0, 5n, 6n, uuid, 'json')), undefined)
})

test('a partition folder is <wal.dir>/<dataset>/<topic>-<partition>', () => {
  assert.equal(partitionLogDirectory('/var/lib/floe/wal', 'events', 'clicks', 4), '/var/lib/floe/wal/events/clicks-4')
})

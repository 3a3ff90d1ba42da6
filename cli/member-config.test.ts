import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import pino from 'pino'
import { parseConfig } from '../shared/config/index.ts'
import { memberConfigOf, memberId, memberOfFolder, memberWalDir } from './member-config.ts'
import { warnOfUnreadFolders } from './members.ts'

const yaml = `kafka: {brokers: [127.0.0.1:9092]}
catalog: {type: sql, path: /tmp/c.db, warehouse: file:///tmp/w}
ingestion:
  threads: 2
  wal: {dir: /var/wal, maxOpenSegmentMemoryBytes: 1000, maxPendingUploadBytes: 3001, volumeSizeBytes: 10000}
metrics: {port: 9464}
datasets:
  - {name: events, topic: events, table: db.events, schema: {id: string}, dlqTopic: events-dlq}
`

describe('a member of a worker on threads', () => {
  test('has a WAL folder of its own and a share of every per-worker budget', () => {
    const config = parseConfig(yaml, 'floe.yaml', {})
    const member = memberConfigOf(config, 1, 2)
    assert.equal(member.ingestion.wal.dir, join('/var/wal', '_member-1'))
    assert.equal(member.ingestion.wal.maxOpenSegmentMemoryBytes, 500)
    assert.equal(member.ingestion.wal.maxPendingUploadBytes, 1500)
    assert.equal(member.ingestion.wal.volumeSizeBytes, 5000)
    assert.equal(member.ingestion.threads, 1)
    assert.equal(member.metrics.port, 0)
    // the rest is the worker's
    assert.deepEqual(member.datasets, config.datasets)
    assert.equal(member.ingestion.commitIntervalSeconds, config.ingestion.commitIntervalSeconds)
    assert.equal(memberId('w1', 1), 'w1-1')
  })

  test("knows its folder from a dataset's, whose name starts with a letter or a digit", () => {
    assert.equal(memberOfFolder('_member-3'), 3)
    assert.equal(memberOfFolder(memberWalDir('/x', 12).slice('/x/'.length)), 12)
    assert.equal(memberOfFolder('member-3'), undefined)
    assert.equal(memberOfFolder('events'), undefined)
  })

  test('a worker names the WAL folders left by a run with another thread count, once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-members-'))
    try {
      for (const folder of ['events', 'orders', '_member-0', '_member-1', '_member-2']) {
        await mkdir(join(dir, folder))
      }
      await writeFile(join(dir, 'floe.lock'), '{}\n')
      const warned = async (members: number) => {
        const lines: Array<{ folders?: string[] }> = []
        const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line)) })
        await warnOfUnreadFolders(dir, members, logger)
        return lines.map((line) => line.folders)
      }
      assert.deepEqual(await warned(1), [['_member-0', '_member-1', '_member-2']])
      assert.deepEqual(await warned(2), [['_member-2', 'events', 'orders']])
      assert.deepEqual(await warned(3), [['events', 'orders']])
      await rm(join(dir, 'events'), { recursive: true })
      await rm(join(dir, 'orders'), { recursive: true })
      assert.deepEqual(await warned(3), [])
      assert.deepEqual(await warned(5), [])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

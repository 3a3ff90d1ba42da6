import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parseConfig } from '../shared/config/index.ts'
import { parseInvocation } from './main.ts'
import { heldTopics, namedTopics, offsetsAtTime, planRewind, runRewind, type TopicBounds } from './rewind.ts'
import { parseRewindArguments } from './rewind-args.ts'
import { writeSqlConfig } from './test-config.ts'

describe('floe rewind: the command line', () => {
  test('takes the dataset and the offsets of several partitions', () => {
    assert.deepEqual(
      parseRewindArguments(['rewind', '--config', 'f.yaml', '--dataset', 'events', '--to-offset', 'ev:0=120,ev:3=0']),
      {
        configPath: 'f.yaml',
        dataset: 'events',
        dryRun: false,
        target: {
          kind: 'offsets',
          partitions: [
            { topic: 'ev', partition: 0, offset: 120n },
            { topic: 'ev', partition: 3, offset: 0n },
          ],
        },
      },
    )
  })

  test('takes a topic name with dots and dashes, and an offset past 2^53 exactly', () => {
    const parsed = parseRewindArguments(['rewind', '--dataset', 'd', '--to-offset', 'a.b-c_d:7=9007199254740993'])
    assert.ok(!('error' in parsed))
    assert.deepEqual(parsed.target, {
      kind: 'offsets',
      partitions: [{ topic: 'a.b-c_d', partition: 7, offset: 9_007_199_254_740_993n }],
    })
  })

  test('takes a time with its zone, and --dry-run', () => {
    const parsed = parseRewindArguments([
      'rewind',
      '-c',
      'f.yaml',
      '--dataset',
      'd',
      '--to-timestamp',
      '2026-11-28T14:00:00+01:00',
      '--dry-run',
    ])
    assert.deepEqual(parsed, {
      configPath: 'f.yaml',
      dataset: 'd',
      dryRun: true,
      target: { kind: 'timestamp', ms: Date.UTC(2026, 10, 28, 13), iso: '2026-11-28T13:00:00.000Z' },
    })
  })

  test('leaves the config file to FLOE_CONFIG when it is not given', () => {
    const parsed = parseRewindArguments(['rewind', '--dataset', 'd', '--to-timestamp', '2026-11-28T14:00:00Z'])
    assert.ok(!('error' in parsed))
    assert.equal(parsed.configPath, undefined)
  })

  const refused: [string, string[], RegExp][] = [
    ['no dataset', ['rewind', '--to-offset', 't:0=1'], /--dataset is required/],
    ['neither target', ['rewind', '--dataset', 'd'], /exactly one of --to-offset and --to-timestamp/],
    [
      'both targets',
      ['rewind', '--dataset', 'd', '--to-offset', 't:0=1', '--to-timestamp', '2026-01-01T00:00:00Z'],
      /exactly one/,
    ],
    [
      'an item without a partition',
      ['rewind', '--dataset', 'd', '--to-offset', 't=5'],
      /'t=5' is not TOPIC:PARTITION=OFFSET/,
    ],
    [
      'a negative offset',
      ['rewind', '--dataset', 'd', '--to-offset', 't:0=-5'],
      /'t:0=-5' is not TOPIC:PARTITION=OFFSET/,
    ],
    ['a partition given twice', ['rewind', '--dataset', 'd', '--to-offset', 't:0=5,t:0=6'], /t:0 is given twice/],
    [
      'an offset past int64',
      ['rewind', '--dataset', 'd', '--to-offset', 't:0=9999999999999999999'],
      /past the largest Kafka offset/,
    ],
    [
      'a time without a zone',
      ['rewind', '--dataset', 'd', '--to-timestamp', '2026-11-28T14:00:00'],
      /not an ISO-8601 time with a zone/,
    ],
    ['a date that is not one', ['rewind', '--dataset', 'd', '--to-timestamp', 'yesterday'], /not an ISO-8601 time/],
    ['an unknown option', ['rewind', '--dataset', 'd', '--to-offset', 't:0=1', '--force'], /--force/],
    ['a stray argument', ['rewind', 'extra', '--dataset', 'd', '--to-offset', 't:0=1'], /unexpected argument 'extra'/],
  ]
  for (const [name, argv, message] of refused) {
    test(`refuses ${name}, saying what is wrong`, () => {
      const parsed = parseRewindArguments(argv)
      assert.ok('error' in parsed, 'refused')
      assert.match(parsed.error, message)
    })
  }

  test("parseInvocation finds the command behind rewind's options", () => {
    assert.deepEqual(parseInvocation(['--dataset', 'd', 'rewind', '--to-offset', 't:0=1', '--dry-run']), {
      kind: 'command',
      command: 'rewind',
      configPath: undefined,
      json: false,
    })
  })
})

describe('floe rewind: the plan', () => {
  const bounds: TopicBounds = {
    partitionCount: 3,
    logStart: new Map([
      [0, 0n],
      [1, 50n],
      [2, 0n],
    ]),
    logEnd: new Map([
      [0, 1000n],
      [1, 1000n],
      [2, 10n],
    ]),
  }
  const current = new Map([
    [
      't',
      new Map([
        [0, 1000n],
        [1, 900n],
      ]),
    ],
    ['other', new Map([[0, 5n]])],
  ])

  test('moves the named partitions back and keeps every other offset, of every topic', () => {
    const plan = planRewind('t', current, new Map([[0, 400n]]), bounds)
    assert.deepEqual(plan.moves, [{ topic: 't', partition: 0, from: 1000n, to: 400n }])
    assert.deepEqual(
      plan.progress,
      new Map([
        [
          't',
          new Map([
            [0, 400n],
            [1, 900n],
          ]),
        ],
        ['other', new Map([[0, 5n]])],
      ]),
    )
    assert.equal(current.get('t')?.get(0), 1000n, 'the table progress given is not changed')
  })

  const refusals: [string, Map<number, bigint>, RegExp][] = [
    ['a partition the topic lacks', new Map([[3, 0n]]), /topic t has no partition 3 \(it has 3\)/],
    [
      'a partition the table never committed',
      new Map([[2, 0n]]),
      /partition 2 of t: the table holds no offset for it yet/,
    ],
    [
      'an offset ahead of the table',
      new Map([[1, 950n]]),
      /offset 950 is ahead of the table's 900; a rewind only moves back/,
    ],
    [
      'an offset before the log start',
      new Map([[1, 10n]]),
      /offset 10 is before the log start 50 \(deleted by retention\)/,
    ],
  ]
  for (const [name, requested, message] of refusals) {
    test(`refuses ${name}`, () => assert.throws(() => planRewind('t', current, requested, bounds), message))
  }

  test('a time ahead of the table leaves the partition where it is', () => {
    const plan = planRewind('t', current, new Map([[1, 1000n]]), bounds, true)
    assert.deepEqual(plan.moves, [{ topic: 't', partition: 1, from: 900n, to: 900n }])
  })

  test('a time takes each partition the table holds to the first record at or after it, else to its end', () => {
    const atTime = new Map<number, bigint | undefined>([
      [0, 300n],
      [1, undefined],
    ])
    assert.deepEqual(
      offsetsAtTime([0, 1], atTime, bounds.logEnd),
      new Map([
        [0, 300n],
        [1, 1000n],
      ]),
    )
  })
})

describe('floe rewind: the topics it moves', () => {
  const datasetWith = (keys: string) =>
    parseConfig(
      `kafka: {brokers: [127.0.0.1:9092], controlTopic: floe-control}
catalog: {type: rest, uri: http://127.0.0.1:8181}
ingestion: {wal: {dir: /tmp/unused}}
datasets:
  - {name: orders, ${keys}, table: ns.orders, customMapping: {id: id}, schema: {id: string}, dlqTopic: orders.dlq}
`,
      'floe.yaml',
      {},
    ).datasets[0]!
  const excluded = new Set(['floe-control', 'orders.dlq'])
  const listed = datasetWith('topics: [orders.us, orders.eu]')
  const pattern = datasetWith("topicPattern: 'orders\\..*'")
  const target = (...topics: string[]) => topics.map((topic) => ({ topic, partition: 0, offset: 1n }))
  const held = (...topics: string[]) => new Map(topics.map((topic) => [topic, new Map([[0, 9n]])]))

  test('by offsets: every topic named, in name order, each one the dataset reads', () => {
    assert.deepEqual(namedTopics(listed, target('orders.us', 'orders.eu', 'orders.us'), excluded), [
      'orders.eu',
      'orders.us',
    ])
    assert.deepEqual(namedTopics(pattern, target('orders.apac'), excluded), ['orders.apac'])
    assert.throws(
      () => namedTopics(listed, target('orders.apac'), excluded),
      /topic orders\.apac is not a topic of dataset orders \(orders\.eu, orders\.us\)/,
    )
    assert.throws(
      () => namedTopics(pattern, target('orders.dlq'), excluded),
      /topic orders\.dlq is not a topic of dataset orders \(topicPattern .*orders.*\)/,
    )
  })

  test("by a time: a list's topics, or the table's topics a pattern matches", () => {
    assert.deepEqual(heldTopics(listed, held(), excluded), ['orders.eu', 'orders.us'])
    assert.deepEqual(heldTopics(pattern, held('orders.us', 'clicks', 'orders.eu'), excluded), [
      'orders.eu',
      'orders.us',
    ])
    assert.throws(
      () => heldTopics(pattern, held('clicks'), excluded),
      /the table holds no offset of a topic topicPattern .*orders.* matches: nothing to rewind/,
    )
  })
})

describe('floe rewind: what it prints before reaching any server', () => {
  test('bad arguments: one line naming the problem, the usage, exit 2', async () => {
    let stderr = ''
    const code = await runRewind(parseRewindArguments(['rewind', '--to-offset', 't:0=1']), {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
    })
    assert.equal(code, 2)
    assert.match(stderr, /^floe rewind: --dataset is required\nusage: floe rewind --config FILE --dataset NAME/)
  })

  test('a routed dataset: refused in one line saying why, exit 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-rewind-'))
    try {
      const config = await writeSqlConfig(
        dir,
        `  - name: events
    topic: events
    table: db.events
    customMapping: {id: id, kind: kind}
    schema: {id: string, kind: string}
    badRecords: skip
    route: {field: kind, table: 'db.events_{value}'}
`,
      )
      let stderr = ''
      const code = await runRewind(
        parseRewindArguments(['rewind', '--config', config, '--dataset', 'events', '--to-offset', 'events:0=0']),
        { stdout: { write: () => true }, stderr: { write: (text: string) => (stderr += text) } },
      )
      assert.equal(code, 2)
      assert.match(stderr, /^floe rewind: dataset events routes its records into many tables .* not supported\n$/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

import assert from 'node:assert/strict'
import { availableParallelism } from 'node:os'
import { describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { parseColumnType } from './column-types.ts'
import { topicsMatching } from './datasets.ts'
import { parseConfig, redact } from './load.ts'
import { availableCores } from './schema.ts'
import { refusal } from './test-support.ts'

const base = `
kafka:
  brokers: [127.0.0.1:9092]
catalog:
  type: rest
  uri: http://127.0.0.1:8181
ingestion:
  wal:
    dir: /tmp/floe-wal
datasets:
  - name: events
    topic: events
    table: analytics.events
    customMapping:
      event_id: id
      ts: timestamp
      user_id: user.id
      tags: tags
    schema:
      event_id: string not null
      ts: timestamptz
      user_id: long
      tags: list<string>
    partitionSpec:
      - day(ts)
      - bucket(16, user_id)
    bloomFilterColumns: [user_id]
    dlqTopic: events-dlq
`

describe('the configuration file', () => {
  test('fills in the documented defaults', () => {
    const config = parseConfig(base, 'floe.yaml', {})
    assert.equal(config.kafka.clientId, 'floe')
    assert.equal(config.kafka.groupPrefix, 'floe')
    assert.equal(config.kafka.controlTopic, 'floe-control')
    assert.equal(config.kafka.autoOffsetReset, 'earliest')
    assert.equal(config.kafka.sessionTimeoutMs, 30_000)
    assert.deepEqual(config.storage, { type: 'local' })
    assert.equal(config.ingestion.commitIntervalSeconds, 20)
    assert.equal(config.ingestion.commitTimeoutSeconds, 30)
    assert.equal(config.ingestion.drainTimeoutSeconds, 96)
    assert.deepEqual(
      [
        config.ingestion.wal.maxFileSizeBytes,
        config.ingestion.wal.maxFileAgeMinutes,
        config.ingestion.wal.maxOpenSegmentsPerPartition,
        config.ingestion.wal.diskHighWatermarkPct,
      ],
      [67108864, 5, 256, 80],
    )
    assert.equal(config.ingestion.wal.encoderThreads, 1)
    assert.equal(config.ingestion.threads, availableCores())
    assert.equal(config.ingestion.wal.layout, 'shared')
    assert.equal(config.ingestion.wal.rowGroupBytes, 4 * 1024 * 1024)
    assert.equal(config.metrics.port, 9464)
    assert.deepEqual(config.maintenance, {
      enabled: false,
      intervalMinutes: 60,
      maxSnapshotAgeHours: 120,
      minSnapshotsToKeep: 1,
      targetFileSizeBytes: 128 * 1024 * 1024,
      minInputFiles: 5,
      orphanAgeHours: 72,
    })
  })

  test('a dataset without storage of its own uses the top-level storage', () => {
    const text = base.replace('ingestion:', 'storage:\n  type: azure\n  azure: {container: lake}\ningestion:')
    const config = parseConfig(text, 'floe.yaml', { FLOE_STORAGE__AZURE__CONNECTION_STRING: 'top' })
    assert.deepEqual(config.datasets[0]?.storage, {
      type: 'azure',
      azure: { connectionString: 'top', container: 'lake' },
    })
  })

  test('a dataset may name storage of its own, its secret from the environment', () => {
    const text = `${base}    storage:\n      type: azure\n      azure: {container: events}\n`
    const config = parseConfig(text, 'floe.yaml', {
      FLOE_DATASETS__EVENTS__STORAGE__AZURE__CONNECTION_STRING: 'UseDevelopmentStorage=true',
    })
    assert.deepEqual(config.storage, { type: 'local' })
    assert.deepEqual(config.datasets[0]?.storage, {
      type: 'azure',
      azure: { connectionString: 'UseDevelopmentStorage=true', container: 'events' },
    })
    assert.match(refusal(text), /datasets\[0\]\.storage\.azure\.connectionString: missing/)
  })

  test('refuses an Azure connection string written in the file, top-level or a dataset’s', () => {
    const top = base.replace(
      'ingestion:',
      'storage:\n  type: azure\n  azure: {connectionString: AccountKey=abc, container: lake}\ningestion:',
    )
    assert.match(
      refusal(top),
      /storage\.azure\.connectionString: a secret is not written in the configuration file: set FLOE_STORAGE__AZURE__CONNECTION_STRING \(or catalog\.accessDelegation: vended-credentials\)/,
    )
    const own = `${base}    storage:\n      type: azure\n      azure: {connectionString: AccountKey=abc, container: events}\n`
    assert.match(
      refusal(own),
      /datasets\[0\]\.storage\.azure\.connectionString: a secret is not written in the configuration file: set FLOE_DATASETS__EVENTS__STORAGE__AZURE__CONNECTION_STRING/,
    )
    assert.doesNotMatch(refusal(own), /AccountKey=abc/)
  })

  test('turns a dataset into an Iceberg schema with field ids and a partition spec', () => {
    const [dataset] = parseConfig(base, 'floe.yaml', {}).datasets
    assert.ok(dataset)
    assert.deepEqual(dataset.namespace, ['analytics'])
    assert.equal(dataset.tableName, 'events')
    assert.deepEqual(dataset.icebergSchema.fields, [
      { id: 1, name: 'event_id', required: true, type: 'string' },
      { id: 2, name: 'ts', required: false, type: 'timestamptz' },
      { id: 3, name: 'user_id', required: false, type: 'long' },
      {
        id: 4,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false },
      },
    ])
    assert.deepEqual(dataset.icebergSpec.fields, [
      { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
      { 'source-id': 3, 'field-id': 1001, name: 'user_id_bucket', transform: 'bucket[16]' },
    ])
  })

  test('gives a raw dataset the archive columns, partitioned by day of the Kafka timestamp unless told', () => {
    const rawBase = base.replace(/ {4}customMapping:[\s\S]*?bloomFilterColumns: \[user_id\]\n/, '    mode: raw\n')
    const [archive] = parseConfig(rawBase, 'floe.yaml', {}).datasets
    assert.ok(archive)
    assert.deepEqual(
      archive.icebergSchema.fields.map((field) => [field.name, field.required, field.type]),
      [
        ['topic', true, 'string'],
        ['partition', true, 'int'],
        ['offset', true, 'long'],
        ['timestamp', true, 'timestamptz'],
        ['timestamp_type', true, 'string'],
        ['key', false, 'binary'],
        ['value', false, 'binary'],
        [
          'headers',
          true,
          {
            type: 'list',
            'element-id': 9,
            element: {
              type: 'struct',
              fields: [
                { id: 10, name: 'key', required: false, type: 'string' },
                { id: 11, name: 'value', required: false, type: 'binary' },
              ],
            },
            'element-required': false,
          },
        ],
      ],
    )
    assert.deepEqual(archive.icebergSpec.fields, [
      { 'source-id': 4, 'field-id': 1000, name: 'timestamp_day', transform: 'day' },
    ])
    const [hourly] = parseConfig(
      rawBase.replace('mode: raw', 'mode: raw\n    partitionSpec: [hour(timestamp), partition]'),
      'floe.yaml',
      {},
    ).datasets
    assert.deepEqual(
      hourly?.icebergSpec.fields.map((field) => field.name),
      ['timestamp_hour', 'partition'],
    )
    const [unpartitioned] = parseConfig(
      rawBase.replace('mode: raw', 'mode: raw\n    partitionSpec: []'),
      'floe.yaml',
      {},
    ).datasets
    assert.deepEqual(unpartitioned?.icebergSpec.fields, [])
  })

  test('partitions by a transform of a $kafka source: through the column mapped from it, or one it adds', () => {
    const spec = (entries: string, column?: [string, string, string]) =>
      parseConfig(
        base
          .replace('      tags: tags\n', `      tags: tags\n${column ? `      ${column[0]}: ${column[1]}\n` : ''}`)
          .replace(
            '      tags: list<string>\n',
            `      tags: list<string>\n${column ? `      ${column[0]}: ${column[2]}\n` : ''}`,
          )
          .replace(/ {4}partitionSpec:\n( {6}- .*\n)+/, `    partitionSpec: ${entries}\n`),
        'floe.yaml',
        {},
      ).datasets[0]!
    const added = spec("['day($kafka.timestamp)', 'identity($kafka.headers.tenant-id)', 'bucket(4, $kafka.key)']")
    assert.deepEqual(
      added.icebergSchema.fields.slice(4).map((field) => [field.id, field.name, field.type]),
      [
        [5, 'kafka_timestamp', 'timestamptz'],
        [6, 'kafka_header_tenant_id', 'string'],
        [7, 'kafka_key', 'string'],
      ],
    )
    assert.equal(added.customMapping.kafka_timestamp, '$kafka.timestamp')
    assert.equal(added.customMapping['kafka_header_tenant_id'], '$kafka.headers.tenant-id')
    assert.deepEqual(
      added.icebergSpec.fields.map((field) => [field['source-id'], field.name, field.transform]),
      [
        [5, 'kafka_timestamp_day', 'day'],
        [6, 'kafka_header_tenant_id', 'identity'],
        [7, 'kafka_key_bucket', 'bucket[4]'],
      ],
    )
    const mapped = spec("['hour($kafka.timestamp)']", ['produced', '$kafka.timestamp', 'timestamptz'])
    assert.equal(mapped.icebergSchema.fields.length, 5, 'no column added beside the mapped one')
    assert.deepEqual(
      mapped.icebergSpec.fields.map((field) => field.name),
      ['produced_hour'],
    )
    assert.throws(
      () => spec("['$kafka.headers']"),
      /partitionSpec\[0\]: cannot partition by \$kafka\.headers: map it to a column/,
    )
    assert.throws(() => spec("['day($kafka.stamp)']"), /partitionSpec\[0\]: \$kafka\.stamp names no Kafka source/)
    assert.throws(
      () => spec("['$kafka.topic']", ['kafka_topic', 'kind', 'string']),
      /partitionSpec\[0\]: \$kafka\.topic needs a column kafka_topic, which the schema has for something else/,
    )
  })

  test('reads what a bad record does: dlq with a dead-letter topic, else the choice made', () => {
    const choice = (text: string) => parseConfig(text, 'floe.yaml', {}).datasets[0]?.badRecords
    assert.equal(choice(base), 'dlq')
    assert.equal(
      choice(base.replace('    dlqTopic: events-dlq\n', '    dlqTopic: events-dlq\n    badRecords: stop\n')),
      'stop',
    )
    assert.equal(choice(base.replace('    dlqTopic: events-dlq\n', '    badRecords: skip\n')), 'skip')
    assert.equal(choice(base.replace('    dlqTopic: events-dlq\n', '    badRecords: stop\n')), 'stop')
    const env = { FLOE_DATASETS__EVENTS__BAD_RECORDS: 'skip' }
    assert.equal(
      parseConfig(base.replace('    dlqTopic: events-dlq\n', ''), 'floe.yaml', env).datasets[0]?.badRecords,
      'skip',
    )
  })

  test("defaults ingestion.threads to the launcher's count of cores (FLOE_CORES), else the machine's", () => {
    assert.equal(availableCores({ FLOE_CORES: '3' }), 3)
    assert.equal(availableCores({}), Math.min(64, availableParallelism()))
    assert.equal(availableCores({ FLOE_CORES: 'two' }), Math.min(64, availableParallelism()))
    assert.equal(availableCores({ FLOE_CORES: '0' }), Math.min(64, availableParallelism()))
    assert.equal(availableCores({ FLOE_CORES: '96' }), 64)
    assert.equal(parseConfig(base, 'floe.yaml', { FLOE_INGESTION__THREADS: '2' }).ingestion.threads, 2)
  })

  test('takes overrides from FLOE_ environment variables, by key path and by dataset name', () => {
    const config = parseConfig(base, 'floe.yaml', {
      FLOE_KAFKA__BROKERS: '127.0.0.1:9093,127.0.0.1:9094',
      FLOE_INGESTION__COMMIT_INTERVAL_SECONDS: '5',
      FLOE_INGESTION__WAL__DISK_HIGH_WATERMARK_PCT: '70',
      FLOE_INGESTION__WAL__ENCODER_THREADS: '1',
      FLOE_INGESTION__WAL__LAYOUT: 'partition',
      FLOE_KAFKA__SSL: 'true',
      FLOE_DATASETS__EVENTS__TOPIC: 'events-v2',
      FLOE_DATASETS__0__DLQ_TOPIC: 'dead',
      FLOE_CONFIG: '/ignored/not/an/override.yaml',
      FLOE_STACK_DIR: '/ignored',
    })
    assert.deepEqual(config.kafka.brokers, ['127.0.0.1:9093', '127.0.0.1:9094'])
    assert.equal(config.ingestion.commitIntervalSeconds, 5)
    assert.equal(config.ingestion.wal.diskHighWatermarkPct, 70)
    assert.equal(config.ingestion.wal.encoderThreads, 1)
    assert.equal(config.ingestion.wal.layout, 'partition')
    assert.equal(config.kafka.ssl, true)
    assert.deepEqual(config.datasets[0]?.topics, ['events-v2'])
    assert.equal(config.datasets[0]?.dlqTopic, 'dead')
  })

  test('keeps secrets given in the environment out of what it prints', () => {
    const config = parseConfig(base, 'floe.yaml', {
      FLOE_CATALOG__TOKEN: 'from-env',
      FLOE_KAFKA__SASL__MECHANISM: 'scram-sha-512',
      FLOE_KAFKA__SASL__USERNAME: 'floe',
      FLOE_KAFKA__SASL__PASSWORD: 's3cret',
    })
    assert.equal(config.kafka.sasl?.mechanism !== 'oauthbearer' && config.kafka.sasl?.password, 's3cret')
    const printed = JSON.stringify(redact(config))
    assert.doesNotMatch(printed, /s3cret|from-env/)
  })

  test('topics: several topics, in name order, into the one table', () => {
    const config = parseConfig(base.replace('topic: events', 'topics: [orders.eu, orders.us, clicks]'), 'floe.yaml', {})
    assert.deepEqual(config.datasets[0]?.topics, ['clicks', 'orders.eu', 'orders.us'])
    assert.equal(config.datasets[0]?.severalTopics, true)
    const one = parseConfig(base, 'floe.yaml', {})
    assert.deepEqual([one.datasets[0]?.topics, one.datasets[0]?.severalTopics], [['events'], false])
  })

  test('topicPattern: the whole name matches; internal, control and dead-letter topics never do', () => {
    const config = parseConfig(base.replace('topic: events', "topicPattern: 'orders\\..*'"), 'floe.yaml', {})
    const dataset = config.datasets[0]
    assert.ok(dataset)
    assert.deepEqual([dataset.topics, dataset.severalTopics, dataset.topicRefreshSeconds], [[], true, 30])
    const names = ['orders.us', 'orders.eu', 'my-orders.us', 'orders', '__consumer_offsets', 'orders.dlq', 'orders.ctl']
    assert.deepEqual(topicsMatching(dataset, names, new Set(['orders.dlq', 'orders.ctl'])), ['orders.eu', 'orders.us'])
    const all = parseConfig(base.replace('topic: events', "topicPattern: '.*'"), 'floe.yaml', {}).datasets[0]
    assert.ok(all)
    assert.deepEqual(topicsMatching(all, names, new Set(['orders.dlq'])), [
      'my-orders.us',
      'orders',
      'orders.ctl',
      'orders.eu',
      'orders.us',
    ])
  })

  const refusals: [string, string, NodeJS.ProcessEnv, RegExp][] = [
    ['a missing section', base.replace(/catalog:\n.*\n.*\n/, ''), {}, /catalog: missing/],
    ['a typo in a key', base.replace('topic: events', 'topik: events'), {}, /datasets\[0\]\.topik: unknown key/],
    [
      'neither topic nor topics',
      base.replace('    topic: events\n', ''),
      {},
      /datasets\[0\]\.topic: name the topic to read \(or topics, or a topicPattern\)/,
    ],
    [
      'both topic and topics',
      base.replace('topic: events', 'topic: events\n    topics: [a, b]'),
      {},
      /datasets\[0\]\.topics: give one of topic, topics and topicPattern, not topic and topics/,
    ],
    [
      'a topicPattern that is not a regular expression',
      base.replace('topic: events', "topicPattern: 'orders.(eu'"),
      {},
      /datasets\[0\]\.topicPattern: not a regular expression/,
    ],
    [
      'a topicPattern beside a topic',
      base.replace('topic: events', "topic: events\n    topicPattern: 'x.*'"),
      {},
      /datasets\[0\]\.topicPattern: give one of topic, topics and topicPattern, not topic and topicPattern/,
    ],
    [
      'a topic named twice',
      base.replace('topic: events', 'topics: [a, b, a]'),
      {},
      /datasets\[0\]\.topics\[2\]: a is named twice/,
    ],
    [
      'an empty topic list',
      base.replace('topic: events', 'topics: []'),
      {},
      /datasets\[0\]\.topics: Too small: expected array to have >=1 items/,
    ],
    [
      'a name Kafka would refuse',
      base.replace('topic: events', 'topics: [orders, "bad/name"]'),
      {},
      /datasets\[0\]\.topics\[1\]: a Kafka topic name/,
    ],
    // Two keys of early versions that never did anything: refused like any unknown key rather than
    // accepted and ignored, so an operator does not tune a knob that turns nothing.
    [
      'idleCheckSeconds, which never did anything',
      base.replace('dir: /tmp/floe-wal', 'dir: /tmp/floe-wal\n    idleCheckSeconds: 30'),
      {},
      /ingestion\.wal\.idleCheckSeconds: unknown key/,
    ],
    [
      'uploadScanSeconds, which never did anything',
      base,
      { FLOE_INGESTION__WAL__UPLOAD_SCAN_SECONDS: '5' },
      /ingestion\.wal\.uploadScanSeconds: unknown key/,
    ],
    [
      'a wrong type',
      base.replace('dir: /tmp/floe-wal', 'dir: /tmp/w\n    maxFileSizeBytes: big'),
      {},
      /ingestion\.wal\.maxFileSizeBytes: .*got string "big"/,
    ],
    [
      'a fractional thread count',
      base.replace('dir: /tmp/floe-wal', 'dir: /tmp/w\n    encoderThreads: 1.5'),
      {},
      /ingestion\.wal\.encoderThreads: /,
    ],
    ['no member thread at all', base, { FLOE_INGESTION__THREADS: '0' }, /ingestion\.threads: /],
    [
      'a negative thread count',
      base,
      { FLOE_INGESTION__WAL__ENCODER_THREADS: '-2' },
      /ingestion\.wal\.encoderThreads: /,
    ],
    [
      'row groups too small to be worth a footer entry',
      base,
      { FLOE_INGESTION__WAL__ROW_GROUP_BYTES: '4096' },
      /ingestion\.wal\.rowGroupBytes: .*65536/,
    ],
    [
      'a bad broker address',
      base.replace('127.0.0.1:9092', 'localhost'),
      {},
      /kafka\.brokers\[0\]: expected host:port/,
    ],
    ['an unknown catalog type', base.replace('type: rest', 'type: hive'), {}, /catalog\.type/],
    [
      'a bad override',
      base,
      { FLOE_INGESTION__COMMIT_INTERVAL_SECONDS: 'soon' },
      /ingestion\.commitIntervalSeconds: .*"soon"/,
    ],
    [
      'an override of a dataset that does not exist',
      base,
      { FLOE_DATASETS__CLICKS__TOPIC: 'x' },
      /FLOE_DATASETS__CLICKS__TOPIC: no dataset named clicks/,
    ],
    [
      'a mapping without a column',
      base.replace('      tags: tags\n', '      tags: tags\n      extra: x\n'),
      {},
      /customMapping\.extra: no such column/,
    ],
    ['a column without a mapping', base.replace('      tags: tags\n', ''), {}, /schema\.tags: no JMESPath expression/],
    [
      'a broken JMESPath',
      base.replace('user_id: user.id', 'user_id: user.[id'),
      {},
      /customMapping\.user_id: not a JMESPath expression/,
    ],
    [
      'a $kafka source that does not exist',
      base.replace('user_id: user.id', "user_id: '$kafka.partitions'"),
      {},
      /customMapping\.user_id: \$kafka\.partitions names no Kafka source: use \$kafka\.topic/,
    ],
    [
      'a $kafka source into a column that cannot hold it',
      base.replace('user_id: user.id', "user_id: '$kafka.topic'"),
      {},
      /customMapping\.user_id: \$kafka\.topic goes into a string column, not long/,
    ],
    [
      'a raw dataset with a mapping of its own',
      base.replace('    customMapping:', '    mode: raw\n    customMapping:'),
      {},
      /datasets\[0\]\.customMapping: a raw dataset's columns are fixed \(topic, partition, offset, timestamp, timestamp_type, key, value, headers\): remove customMapping/,
    ],
    [
      'a mapped dataset without a schema',
      base.replace(/ {4}schema:\n( {6}.*\n)+/, ''),
      {},
      /datasets\[0\]\.schema: name the type of each mapped column \(or leave out customMapping, to infer the columns\)/,
    ],
    [
      'a list of headers whose structs are not key and value',
      base
        .replace('tags: tags', "tags: '$kafka.headers'")
        .replace('tags: list<string>', "tags: 'list<struct<name: string, value: binary>>'"),
      {},
      /customMapping\.tags: \$kafka\.headers goes into a map<string, string\|binary> or list<struct<key: string, value: string\|binary>> column, not list/,
    ],
    [
      'an unknown column type',
      base.replace('user_id: long', 'user_id: bigint'),
      {},
      /schema\.user_id: unknown type 'bigint'/,
    ],
    [
      'a transform on a missing column',
      base.replace('- day(ts)', '- day(when)'),
      {},
      /partitionSpec\[0\]: no such column: when/,
    ],
    [
      'a transform that does not fit the type',
      base.replace('- day(ts)', '- day(event_id)'),
      {},
      /day does not apply to column event_id of type string/,
    ],
    [
      'a bloom filter on a missing column',
      base.replace('bloomFilterColumns: [user_id]', 'bloomFilterColumns: [uid]'),
      {},
      /bloomFilterColumns\[0\]: no such column: uid/,
    ],
    [
      'a table without namespace',
      base.replace('table: analytics.events', 'table: events'),
      {},
      /datasets\[0\]\.table: expected namespace\.table/,
    ],
    ['YAML that does not parse', 'kafka: [', {}, /floe\.yaml:\d+:\d+: not valid YAML/],
    [
      'a dataset without a dead-letter topic that does not say what bad records do',
      base.replace('    dlqTopic: events-dlq\n', ''),
      {},
      /datasets\[0\]\.badRecords: the dataset has no dlqTopic: set badRecords to skip .* or stop/,
    ],
    [
      'badRecords: dlq without a dead-letter topic',
      base.replace('    dlqTopic: events-dlq\n', '    badRecords: dlq\n'),
      {},
      /datasets\[0\]\.dlqTopic: badRecords: dlq needs a dead-letter topic/,
    ],
    [
      'badRecords: skip beside a dead-letter topic',
      base.replace('    dlqTopic: events-dlq\n', '    dlqTopic: events-dlq\n    badRecords: skip\n'),
      {},
      /datasets\[0\]\.badRecords: skip drops bad records, but dlqTopic is set/,
    ],
    [
      'an unknown badRecords choice',
      base.replace('    dlqTopic: events-dlq\n', '    badRecords: ignore\n'),
      {},
      /datasets\[0\]\.badRecords/,
    ],
    [
      // twenty rounds of the defaults (20 s interval, 30 s timeout) are 1,000 s; 0.25 h is 900 s
      'an orphan age under twenty rounds, when an upload may still be waiting for its commit',
      `${base}maintenance:\n  orphanAgeHours: 0.25\n`,
      {},
      /maintenance\.orphanAgeHours: must be at least twenty rounds/,
    ],
  ]
  test('takes an orphan age of twenty rounds, and measures the rounds by the configured interval', () => {
    const config = parseConfig(`${base}maintenance:\n  orphanAgeHours: 0.28\n`, 'floe.yaml', {})
    assert.equal(config.maintenance.orphanAgeHours, 0.28)
    const longer = base.replace('ingestion:\n', 'ingestion:\n  commitIntervalSeconds: 60\n')
    assert.match(
      refusal(`${longer}maintenance:\n  orphanAgeHours: 0.28\n`),
      /maintenance\.orphanAgeHours: must be at least twenty rounds/,
    )
  })

  for (const [what, text, env, expected] of refusals) {
    test(`refuses ${what} with the key path and the problem in one line`, () => {
      assert.match(refusal(text, env), expected)
    })
  }
})

describe('column types', () => {
  const cases: [string, unknown, boolean][] = [
    ['long', 'long', false],
    ['decimal(10, 2)', 'decimal(10, 2)', false],
    ['DECIMAL(38,0) not null', 'decimal(38, 0)', true],
    ['fixed[16]', 'fixed[16]', false],
    [
      'map<string, list<long>>',
      {
        type: 'map',
        'key-id': 0,
        key: 'string',
        'value-id': 0,
        value: { type: 'list', 'element-id': 0, element: 'long', 'element-required': false },
        'value-required': false,
      },
      false,
    ],
    [
      'struct<id: long, name: string>',
      {
        type: 'struct',
        fields: [
          { id: 0, name: 'id', required: false, type: 'long' },
          { id: 0, name: 'name', required: false, type: 'string' },
        ],
      },
      false,
    ],
  ]
  for (const [text, type, required] of cases) {
    test(`reads '${text}'`, () => {
      assert.deepEqual(parseColumnType(text, 'c'), { type, required })
    })
  }
  for (const bad of [
    'decimal(39,0)',
    'decimal(5,6)',
    'list<string',
    'struct<a: int, a: int>',
    'long maybe',
    'fixed[0]',
  ]) {
    test(`refuses '${bad}'`, () => {
      assert.throws(
        () => parseColumnType(bad, 'c'),
        (e: unknown) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})

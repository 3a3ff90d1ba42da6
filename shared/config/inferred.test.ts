import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parseConfig } from './load.ts'
import { refusal, restAndOneDataset } from './test-support.ts'

// the one dataset of test-support, without its mapping
const head = `kafka:
  brokers: [127.0.0.1:9092]
${restAndOneDataset.replace('    customMapping: {id: id}\n    schema: {id: string}\n', '')}`

test('a dataset without customMapping infers its columns; declared ones and top-level timestampFields are columns at start', () => {
  const [inferred] = parseConfig(
    `${head}    timestampFields: [at, ctx.seen]\n    partitionSpec: [day(at), hour($kafka.timestamp)]\n`,
    'floe.yaml',
    {},
  ).datasets
  assert.ok(inferred)
  assert.equal(inferred.inferColumns, true)
  assert.deepEqual(inferred.timestampFields, ['at', 'ctx.seen'])
  assert.deepEqual(
    inferred.icebergSchema.fields.map((field) => [field.id, field.name, field.required, field.type]),
    [
      [1, 'at', false, 'timestamptz'],
      [2, 'kafka_timestamp', false, 'timestamptz'],
    ],
  )
  assert.deepEqual(inferred.customMapping, { at: '"at"', kafka_timestamp: '$kafka.timestamp' })
  assert.deepEqual(
    inferred.icebergSpec.fields.map((field) => field.name),
    ['at_day', 'kafka_timestamp_hour'],
  )
  const [bare] = parseConfig(head, 'floe.yaml', {}).datasets
  assert.equal(bare?.inferColumns, true)
  assert.deepEqual(bare?.icebergSchema.fields, [])
  // declared columns: the types a first value cannot tell, read by field name
  const [declared] = parseConfig(`${head}    schema: {amount: double, 'odd name': string}\n`, 'floe.yaml', {}).datasets
  assert.equal(declared?.inferColumns, true)
  assert.deepEqual(
    declared?.icebergSchema.fields.map((field) => [field.name, field.type]),
    [
      ['amount', 'double'],
      ['odd name', 'string'],
    ],
  )
  assert.deepEqual(declared?.customMapping, { amount: '"amount"', 'odd name': '"odd name"' })
  const [mapped] = parseConfig(
    `${head}    customMapping: {id: id}\n    schema: {id: string}\n`,
    'floe.yaml',
    {},
  ).datasets
  assert.equal(mapped?.inferColumns, false)
})

test('refuses a mapping without types, a field declared twice, timestampFields beside a mapping or in raw mode, and a partition by an unknown column', () => {
  assert.match(
    refusal(`${head}    customMapping: {id: id}\n`),
    /datasets\[0\]\.schema: .*leave out customMapping, to infer/,
  )
  assert.match(
    refusal(`${head}    schema: {at: string}\n    timestampFields: [at]\n`),
    /datasets\[0\]\.timestampFields\[0\]: at is declared in schema too/,
  )
  assert.match(
    refusal(`${head}    customMapping: {id: id}\n    schema: {id: string}\n    timestampFields: [at]\n`),
    /datasets\[0\]\.timestampFields: only a dataset that infers its columns/,
  )
  assert.match(
    refusal(`${head}    mode: raw\n    timestampFields: [at]\n`),
    /datasets\[0\]\.timestampFields: a raw dataset/,
  )
  assert.match(refusal(`${head}    timestampFields: [a..b]\n`), /timestampFields\[0\]: 'a\.\.b' has an empty name/)
  assert.match(
    refusal(`${head}    partitionSpec: [day(ts)]\n`),
    /partitionSpec\[0\]: no column ts at start: a dataset that infers its columns partitions by its top-level timestampFields/,
  )
})

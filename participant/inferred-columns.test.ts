import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NestedField, PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import { FloeError } from '../shared/index.ts'
import { PhaseClock, silentLogger } from '../shared/telemetry/index.ts'
import type { Decoder } from './decode/index.ts'
import { InferredColumns } from './inferred-columns.ts'
import { TableFollower, type TableShape } from './table-follower.ts'

const spec: PartitionSpec = { 'spec-id': 0, fields: [] }
const schemaOf = (id: number, ...names: string[]): Schema => ({
  type: 'struct',
  'schema-id': id,
  fields: names.map((name, i) => ({ id: i + 1, name, required: false, type: 'string' })),
})
const field = (name: string): NestedField => ({ id: 0, name, required: false, type: 'string' })

/** An InferredColumns over fakes, recording the order in which things happened. */
function setup(widen: (requests: readonly (readonly NestedField[])[]) => Promise<TableShape>) {
  const events: string[] = []
  const shape: TableShape = { schema: schemaOf(0, 'id'), spec }
  const follower = new TableFollower(shape, undefined, silentLogger)
  const decoder = {
    useSchema: (schema: Schema) => events.push(`decoder ${schema['schema-id']}`),
    refuseWidening: (fields: readonly NestedField[]) => events.push(`refused ${fields.map((f) => f.name).join('+')}`),
  } as unknown as Decoder
  const columns = new InferredColumns({
    follower,
    decoder,
    widen: async (requests) => {
      events.push(`widen ${requests.map((r) => r.map((f) => f.name).join('+')).join(', ')}`)
      return widen(requests)
    },
    followTable: async ({ schema }) => {
      // the slots' environment has the new shape before any log rotates to it
      events.push(`logs ${schema['schema-id']}, shape ${shape.schema['schema-id']}`)
    },
    logger: silentLogger,
    phases: new PhaseClock(),
  })
  return { columns, events, shape }
}

test("the turn's requests are committed together, then the shape, the decoder and the logs change in that order", async () => {
  const { columns, events } = setup(async () => ({ schema: schemaOf(1, 'id', 'a', 'b'), spec }))
  await columns.settle()
  assert.deepEqual(events, [], 'nothing asked, nothing done')
  columns.request([field('a')])
  columns.request([field('b')])
  assert.equal(columns.pending, true)
  await columns.settle()
  assert.deepEqual(events, ['widen a, b', 'decoder 1', 'logs 1, shape 1'])
  assert.equal(columns.pending, false)
})

test('a widening that fails keeps its requests for the next turn, and changes nothing meanwhile', async () => {
  let down = true
  const { columns, events, shape } = setup(async () => {
    if (down) throw new FloeError('CATALOG_UNAVAILABLE', 'catalog down')
    return { schema: schemaOf(1, 'id', 'a'), spec }
  })
  columns.request([field('a')])
  await assert.rejects(columns.settle(), { code: 'CATALOG_UNAVAILABLE' })
  assert.equal(shape.schema['schema-id'], 0)
  assert.equal(columns.pending, true)
  down = false
  await columns.settle()
  assert.deepEqual(events, ['widen a', 'widen a', 'decoder 1', 'logs 1, shape 1'])
})

test('a change read from the table waits for the loop; the schema in use again is no change', async () => {
  const { columns, events } = setup(async () => assert.fail('no widening asked'))
  columns.changed({ schema: schemaOf(0, 'id'), spec }, columns.generation)
  await columns.settle()
  assert.deepEqual(events, [])
  columns.changed({ schema: schemaOf(2, 'id', 'other'), spec }, columns.generation)
  assert.deepEqual(events, [], 'not applied when read')
  await columns.settle()
  assert.deepEqual(events, ['decoder 2', 'logs 2, shape 2'])
})

test('a read begun before a shape was applied is dropped: it may hold the table from before', async () => {
  const { columns, events } = setup(async () => ({ schema: schemaOf(1, 'id', 'a'), spec }))
  const before = columns.generation
  columns.request([field('a')])
  await columns.settle()
  // the read that began earlier answers with the table from before this worker's widening
  columns.changed({ schema: schemaOf(0, 'id'), spec }, before)
  assert.equal(columns.pending, false)
  columns.changed({ schema: schemaOf(3, 'id', 'a', 'b'), spec }, columns.generation)
  await columns.settle()
  assert.deepEqual(events, ['widen a', 'decoder 1', 'logs 1, shape 1', 'decoder 3', 'logs 3, shape 3'])
})

test('a schema the catalog refuses is tried request by request; the refused ones go to the decoder, the rest commit', async () => {
  const { columns, events } = setup(async (requests) => {
    const names = requests.flatMap((r) => r.map((f) => f.name))
    if (names.includes('Bad')) throw new FloeError('CATALOG_BAD_REQUEST', 'invalid column name: Bad')
    return { schema: schemaOf(names.length === 0 ? 0 : 1, 'id', ...names), spec }
  })
  columns.request([field('a')])
  columns.request([field('Bad')])
  await columns.settle()
  assert.deepEqual(events, ['widen a, Bad', 'widen a', 'widen Bad', 'refused Bad', 'decoder 1', 'logs 1, shape 1'])
  assert.equal(columns.pending, false)
})

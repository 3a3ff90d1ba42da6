import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { RecordDecoder } from './decoder.ts'
import { compileDecoder } from './index.ts'
import { datasetOf } from './test-support.ts'

const bytes = (json: unknown) => Buffer.from(JSON.stringify(json))

describe('evaluating plain paths without the interpreter', () => {
  const pathMapping = {
    a: 'a',
    ab: 'a.b',
    abc: 'a.b.c',
    quoted: '"x-y"."z w"',
    first: 'list[0]',
  }
  const pathSchema = { a: 'string', ab: 'string', abc: 'string', quoted: 'string', first: 'string' }
  const pathDataset = datasetOf(pathMapping, pathSchema)
  const fast = new RecordDecoder(pathDataset, { maxRecordBytes: 1 << 20 }, { plainPaths: true })
  const interpreted = new RecordDecoder(pathDataset, { maxRecordBytes: 1 << 20 }, { plainPaths: false })
  const events = [
    {},
    { a: 'x' },
    { a: { b: 'y' } },
    { a: { b: { c: 'z' } } },
    { a: { b: ['z'] } },
    { a: ['b'] },
    { a: null },
    { a: { b: null } },
    { a: 7, 'x-y': { 'z w': 'q' } },
    { a: true, list: ['p'] },
    { a: '', 'x-y': 'not an object' },
  ]
  for (const event of events) {
    test(`gives what the interpreter gives for ${JSON.stringify(event)}`, () => {
      const run = (decoder: RecordDecoder) => {
        try {
          return decoder.decode(bytes(event))
        } catch (error) {
          return isFloeError(error) ? error.message : error
        }
      }
      assert.deepEqual(run(fast), run(interpreted))
    })
  }

  test('a field named like an Object.prototype member reads only the event, never the prototype', () => {
    const inherited = compileDecoder(
      datasetOf({ kind: 'constructor', p: 'a.toString' }, { kind: 'string', p: 'string' }),
      {
        maxRecordBytes: 1024,
      },
    )
    assert.deepEqual(inherited.decode(bytes({ a: {} })), { kind: null, p: null })
    assert.deepEqual(inherited.decode(bytes({ constructor: 'c', a: { toString: 't' } })), { kind: 'c', p: 't' })
  })

  test('columns named like Object.prototype members are ordinary columns of the row', () => {
    // The configuration drops a `__proto__` key, so that column is added by hand.
    const base = datasetOf({ constructor: 'c', id: 'id' }, { constructor: 'string', id: 'string' })
    const field = { ...base.icebergSchema.fields[0]!, id: 3, name: '__proto__' }
    const withProto = {
      ...base,
      customMapping: { ...base.customMapping, ['__proto__']: 'p' },
      icebergSchema: { ...base.icebergSchema, fields: [...base.icebergSchema.fields, field] },
    }
    const row = compileDecoder(withProto, { maxRecordBytes: 1024 }).decode(bytes({ c: 'k', p: 'value', id: 'i' }))
    assert.equal(Object.getPrototypeOf(row), Object.prototype)
    assert.deepEqual(Object.keys(row), ['constructor', 'id', '__proto__'])
    assert.equal(Object.getOwnPropertyDescriptor(row, '__proto__')?.value, 'value')
    assert.equal(row.constructor, 'k')
  })
})

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type ErrorCode, isFloeError } from '../../errors.ts'
import { checkRequirements, parseTableMetadata, type TableMetadata, type TableRequirement } from './index.ts'
import { ids, metadataText } from './test-fixtures.ts'

const table = parseTableMetadata(metadataText)
const uuid = table['table-uuid']

const cases: {
  name: string
  metadata: TableMetadata | undefined
  requirements: TableRequirement[]
  error?: ErrorCode
}[] = [
  { name: 'no requirements hold on any table', metadata: table, requirements: [] },
  {
    name: 'assert-create holds when the table is missing',
    metadata: undefined,
    requirements: [{ type: 'assert-create' }],
  },
  {
    name: 'assert-create fails when the table exists',
    metadata: table,
    requirements: [{ type: 'assert-create' }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'any other requirement on a missing table is not found',
    metadata: undefined,
    requirements: [{ type: 'assert-table-uuid', uuid }],
    error: 'CATALOG_NOT_FOUND',
  },
  {
    name: 'assert-table-uuid holds for the same uuid',
    metadata: table,
    requirements: [{ type: 'assert-table-uuid', uuid }],
  },
  {
    name: 'assert-table-uuid fails for another uuid',
    metadata: table,
    requirements: [{ type: 'assert-table-uuid', uuid: 'b0000000-0000-0000-0000-000000000000' }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-ref-snapshot-id holds when main is at the 63-bit id',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': ids.third }],
  },
  {
    name: 'assert-ref-snapshot-id fails when main moved on',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': ids.second }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-ref-snapshot-id fails for an id one off in the last digit',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': ids.third - 1n }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-ref-snapshot-id with null holds when the ref does not exist',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'audit', 'snapshot-id': null }],
  },
  {
    name: 'assert-ref-snapshot-id with null fails when the ref exists',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-ref-snapshot-id fails when the ref is missing',
    metadata: table,
    requirements: [{ type: 'assert-ref-snapshot-id', ref: 'audit', 'snapshot-id': ids.first }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-last-assigned-field-id holds for the last column id',
    metadata: table,
    requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 2 }],
  },
  {
    name: 'assert-last-assigned-field-id fails for another id',
    metadata: table,
    requirements: [{ type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 3 }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-current-schema-id holds for the current schema',
    metadata: table,
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
  },
  {
    name: 'assert-current-schema-id fails for another schema',
    metadata: table,
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 1 }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-last-assigned-partition-id holds for 1000',
    metadata: table,
    requirements: [{ type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 1000 }],
  },
  {
    name: 'assert-last-assigned-partition-id fails for 999',
    metadata: table,
    requirements: [{ type: 'assert-last-assigned-partition-id', 'last-assigned-partition-id': 999 }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-default-spec-id holds for the default spec',
    metadata: table,
    requirements: [{ type: 'assert-default-spec-id', 'default-spec-id': 0 }],
  },
  {
    name: 'assert-default-spec-id fails for another spec',
    metadata: table,
    requirements: [{ type: 'assert-default-spec-id', 'default-spec-id': 1 }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'assert-default-sort-order-id holds for the default order',
    metadata: table,
    requirements: [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 0 }],
  },
  {
    name: 'assert-default-sort-order-id fails for another order',
    metadata: table,
    requirements: [{ type: 'assert-default-sort-order-id', 'default-sort-order-id': 1 }],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'a list fails on its first unmet requirement',
    metadata: table,
    requirements: [
      { type: 'assert-table-uuid', uuid },
      { type: 'assert-current-schema-id', 'current-schema-id': 7 },
    ],
    error: 'COMMIT_CONFLICT',
  },
  {
    name: 'an unknown requirement is a bad request',
    metadata: table,
    requirements: [{ type: 'assert-something-new' } as unknown as TableRequirement],
    error: 'CATALOG_BAD_REQUEST',
  },
]

describe('checkRequirements', () => {
  for (const { name, metadata, requirements, error } of cases) {
    test(`says ${name}`, () => {
      if (error === undefined) checkRequirements(metadata, requirements)
      else
        assert.throws(
          () => checkRequirements(metadata, requirements),
          (e) => isFloeError(e, error),
        )
    })
  }

  test('puts the expected and found snapshot ids in the conflict details as strings', () => {
    try {
      checkRequirements(table, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': ids.second }])
      assert.fail('no conflict')
    } catch (error) {
      assert.ok(isFloeError(error, 'COMMIT_CONFLICT'))
      assert.deepEqual(error.details, {
        requirement: 'assert-ref-snapshot-id',
        expected: ids.second.toString(),
        actual: ids.third.toString(),
      })
      assert.equal(error.retryable, true)
    }
  })
})

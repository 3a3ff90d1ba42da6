// What a catalog checks before it applies a commit: each REST TableRequirement against the
// table as it is now. A failed requirement means someone else changed the table first: the
// caller reloads, re-checks its own invariants and tries again (COMMIT_CONFLICT, the REST
// catalog's 409 CommitFailedException).
import { FloeError } from '../../errors.ts'
import type { TableRequirement } from './changes.ts'
import type { TableMetadata } from './model.ts'

function conflict(requirement: TableRequirement, expected: unknown, actual: unknown): FloeError {
  const show = (value: unknown) => (typeof value === 'bigint' ? value.toString() : value)
  return new FloeError(
    'COMMIT_CONFLICT',
    `requirement ${requirement.type} failed: expected ${String(show(expected))}, found ${String(show(actual))}`,
    { details: { requirement: requirement.type, expected: show(expected), actual: show(actual) } },
  )
}

/**
 * Throws COMMIT_CONFLICT for the first requirement the table does not meet. `metadata` is
 * undefined when the table does not exist: then only assert-create can hold, and any other
 * requirement throws CATALOG_NOT_FOUND.
 */
export function checkRequirements(
  metadata: TableMetadata | undefined,
  requirements: readonly TableRequirement[],
): void {
  for (const requirement of requirements) {
    if (requirement.type === 'assert-create') {
      if (metadata !== undefined) throw conflict(requirement, 'no table', `table ${metadata['table-uuid']}`)
      continue
    }
    if (metadata === undefined) {
      throw new FloeError('CATALOG_NOT_FOUND', `requirement ${requirement.type} on a table that does not exist`)
    }
    switch (requirement.type) {
      case 'assert-table-uuid':
        if (metadata['table-uuid'] !== requirement.uuid)
          throw conflict(requirement, requirement.uuid, metadata['table-uuid'])
        break
      case 'assert-ref-snapshot-id': {
        const actual = metadata.refs[requirement.ref]?.['snapshot-id'] ?? null
        if (actual !== requirement['snapshot-id']) {
          throw conflict(requirement, requirement['snapshot-id'] ?? 'no ref', actual ?? 'no ref')
        }
        break
      }
      case 'assert-last-assigned-field-id':
        if (metadata['last-column-id'] !== requirement['last-assigned-field-id']) {
          throw conflict(requirement, requirement['last-assigned-field-id'], metadata['last-column-id'])
        }
        break
      case 'assert-current-schema-id':
        if (metadata['current-schema-id'] !== requirement['current-schema-id']) {
          throw conflict(requirement, requirement['current-schema-id'], metadata['current-schema-id'])
        }
        break
      case 'assert-last-assigned-partition-id':
        if (metadata['last-partition-id'] !== requirement['last-assigned-partition-id']) {
          throw conflict(requirement, requirement['last-assigned-partition-id'], metadata['last-partition-id'])
        }
        break
      case 'assert-default-spec-id':
        if (metadata['default-spec-id'] !== requirement['default-spec-id']) {
          throw conflict(requirement, requirement['default-spec-id'], metadata['default-spec-id'])
        }
        break
      case 'assert-default-sort-order-id':
        if (metadata['default-sort-order-id'] !== requirement['default-sort-order-id']) {
          throw conflict(requirement, requirement['default-sort-order-id'], metadata['default-sort-order-id'])
        }
        break
      default: {
        const unknown: { type: string } = requirement
        throw new FloeError('CATALOG_BAD_REQUEST', `unknown table requirement ${unknown.type}`)
      }
    }
  }
}

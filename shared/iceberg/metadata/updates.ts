// What a catalog server does with a commit's updates, as a pure function: the SQL catalog needs it
// (it has no server), and tests of the commit loop can use it as a working fake. Semantics follow
// Iceberg's TableMetadata.Builder and pyiceberg's update_table_metadata where they agree:
//
// - add-snapshot appends the snapshot and sets last-sequence-number and last-updated-ms from it;
// - set-snapshot-ref on main also sets current-snapshot-id and appends to the snapshot log;
// - add-schema / add-spec / add-sort-order reuse the id of an identical existing entry, else take
//   the next id; -1 in set-current-schema / set-default-spec / set-default-sort-order means the
//   one added last in this commit;
// - remove-snapshots also drops refs and statistics of removed snapshots and cuts the snapshot
//   log before any entry whose snapshot is gone (a gap would make time travel lie);
// - when anything changed, the previous metadata file goes to the metadata log (trimmed to
//   write.metadata.previous-versions-max) and last-updated-ms moves to now if nothing set it.
//
// An update the table cannot take (an unknown snapshot, a duplicate id, a downgrade) throws
// CATALOG_BAD_REQUEST, the REST catalog's 400: retrying the same request cannot succeed.
import { isDeepStrictEqual } from 'node:util'
import { FloeError } from '../../errors.ts'
import type { NestedField, PartitionSpec, Schema, SortOrder } from '../types.ts'
import type { TableUpdate, UnboundPartitionSpec } from './changes.ts'
import {
  mainBranch,
  previousVersionsMaxDefault,
  type SnapshotLogEntry,
  type SnapshotRef,
  type TableMetadata,
  tableProperties,
} from './model.ts'

/** Newest format version this code can maintain (v3 needs row lineage on every snapshot). */
const maxFormatVersion = 2
/** Java's TableMetadata refuses a file whose last-updated-ms is over a minute behind its logs. */
const clockSkewMs = 60_000

function badRequest(message: string, details: Record<string, unknown> = {}): FloeError {
  return new FloeError('CATALOG_BAD_REQUEST', message, { details })
}

function highestFieldId(fields: NestedField[]): number {
  let highest = 0
  const visit = (type: NestedField['type']): void => {
    if (typeof type === 'string') return
    if (type.type === 'struct') for (const field of type.fields) visitField(field)
    else if (type.type === 'list') {
      highest = Math.max(highest, type['element-id'])
      visit(type.element)
    } else {
      highest = Math.max(highest, type['key-id'], type['value-id'])
      visit(type.key)
      visit(type.value)
    }
  }
  const visitField = (field: NestedField): void => {
    highest = Math.max(highest, field.id)
    visit(field.type)
  }
  for (const field of fields) visitField(field)
  return highest
}

function sameSchema(a: Schema, b: Schema): boolean {
  return (
    isDeepStrictEqual(a.fields, b.fields) &&
    isDeepStrictEqual(a['identifier-field-ids'] ?? [], b['identifier-field-ids'] ?? [])
  )
}

interface Batch {
  metadata: TableMetadata
  changed: boolean
  addedSnapshotIds: Set<bigint>
  removedSnapshots: boolean
  lastAddedSchemaId?: number
  lastAddedSpecId?: number
  lastAddedSortOrderId?: number
}

function change(batch: Batch, fields: Partial<TableMetadata>): void {
  batch.metadata = { ...batch.metadata, ...fields }
  batch.changed = true
}

function addSchema(batch: Batch, schema: Schema, lastColumnId: number | undefined): void {
  const m = batch.metadata
  const existing = m.schemas.find((s) => sameSchema(s, schema))
  const highest = Math.max(m['last-column-id'], lastColumnId ?? 0, highestFieldId(schema.fields))
  if (existing !== undefined) {
    batch.lastAddedSchemaId = existing['schema-id']
    if (highest !== m['last-column-id']) change(batch, { 'last-column-id': highest })
    return
  }
  const schemaId = Math.max(m['current-schema-id'], ...m.schemas.map((s) => s['schema-id'] + 1))
  batch.lastAddedSchemaId = schemaId
  change(batch, { schemas: [...m.schemas, { ...schema, 'schema-id': schemaId }], 'last-column-id': highest })
}

function addSpec(batch: Batch, unbound: UnboundPartitionSpec): void {
  const m = batch.metadata
  let lastPartitionId = m['last-partition-id']
  const fields = unbound.fields.map((field) => {
    const fieldId = field['field-id'] ?? lastPartitionId + 1
    lastPartitionId = Math.max(lastPartitionId, fieldId)
    return { ...field, 'field-id': fieldId }
  })
  const existing = m['partition-specs'].find((s) => isDeepStrictEqual(s.fields, fields))
  if (existing !== undefined) {
    batch.lastAddedSpecId = existing['spec-id']
    return
  }
  const specId = Math.max(0, ...m['partition-specs'].map((s) => s['spec-id'] + 1))
  const spec: PartitionSpec = { 'spec-id': specId, fields }
  batch.lastAddedSpecId = specId
  change(batch, { 'partition-specs': [...m['partition-specs'], spec], 'last-partition-id': lastPartitionId })
}

function addSortOrder(batch: Batch, order: SortOrder): void {
  const m = batch.metadata
  const existing = m['sort-orders'].find((o) => isDeepStrictEqual(o.fields, order.fields))
  if (existing !== undefined) {
    batch.lastAddedSortOrderId = existing['order-id']
    return
  }
  const orderId = order.fields.length === 0 ? 0 : Math.max(1, ...m['sort-orders'].map((o) => o['order-id'] + 1))
  batch.lastAddedSortOrderId = orderId
  change(batch, { 'sort-orders': [...m['sort-orders'], { ...order, 'order-id': orderId }] })
}

function chosenId(requested: number, lastAdded: number | undefined, what: string): number {
  if (requested !== -1) return requested
  if (lastAdded === undefined) throw badRequest(`cannot set the last added ${what}: none was added`)
  return lastAdded
}

function setRef(batch: Batch, name: string, ref: SnapshotRef, nowMs: number): void {
  const m = batch.metadata
  if (isDeepStrictEqual(m.refs[name], ref)) return
  const snapshot = m.snapshots.find((s) => s['snapshot-id'] === ref['snapshot-id'])
  if (snapshot === undefined) {
    throw badRequest(`cannot set ${name} to unknown snapshot ${ref['snapshot-id']}`, { ref: name })
  }
  if (name === mainBranch && ref.type !== 'branch') throw badRequest('main must be a branch')
  const fields: Partial<TableMetadata> = { refs: { ...m.refs, [name]: ref } }
  let updatedMs = m['last-updated-ms']
  if (batch.addedSnapshotIds.has(ref['snapshot-id'])) updatedMs = snapshot['timestamp-ms']
  if (name === mainBranch) {
    if (!batch.addedSnapshotIds.has(ref['snapshot-id'])) updatedMs = nowMs
    fields['current-snapshot-id'] = ref['snapshot-id']
    fields['snapshot-log'] = [...m['snapshot-log'], { 'timestamp-ms': updatedMs, 'snapshot-id': ref['snapshot-id'] }]
  }
  fields['last-updated-ms'] = updatedMs
  change(batch, fields)
}

function removeRef(batch: Batch, name: string): void {
  const m = batch.metadata
  if (m.refs[name] === undefined) return
  const refs = { ...m.refs }
  delete refs[name]
  change(batch, name === mainBranch ? { refs, 'current-snapshot-id': null } : { refs })
}

function removeSnapshots(batch: Batch, ids: readonly bigint[]): void {
  const m = batch.metadata
  const removed = new Set(ids)
  const snapshots = m.snapshots.filter((s) => !removed.has(s['snapshot-id']))
  if (snapshots.length === m.snapshots.length) return
  batch.removedSnapshots = true
  change(batch, {
    snapshots,
    statistics: m.statistics.filter((s) => !removed.has(s['snapshot-id'])),
    'partition-statistics': m['partition-statistics'].filter((s) => !removed.has(s['snapshot-id'])),
  })
  for (const [name, ref] of Object.entries(m.refs)) if (removed.has(ref['snapshot-id'])) removeRef(batch, name)
}

function applyOne(batch: Batch, update: TableUpdate, nowMs: number): void {
  const m = batch.metadata
  switch (update.action) {
    case 'assign-uuid':
      if (m['table-uuid'] !== update.uuid) change(batch, { 'table-uuid': update.uuid })
      return
    case 'upgrade-format-version': {
      const version = update['format-version']
      if (version > maxFormatVersion) throw badRequest(`format version ${version} is not supported`)
      if (version < m['format-version'])
        throw badRequest(`cannot downgrade format version ${m['format-version']} to ${version}`)
      if (version !== m['format-version']) change(batch, { 'format-version': version })
      return
    }
    case 'add-schema':
      addSchema(batch, update.schema, update['last-column-id'])
      return
    case 'set-current-schema': {
      const id = chosenId(update['schema-id'], batch.lastAddedSchemaId, 'schema')
      if (!m.schemas.some((s) => s['schema-id'] === id)) throw badRequest(`unknown schema ${id}`)
      if (id !== m['current-schema-id']) change(batch, { 'current-schema-id': id })
      return
    }
    case 'add-spec':
      addSpec(batch, update.spec)
      return
    case 'set-default-spec': {
      const id = chosenId(update['spec-id'], batch.lastAddedSpecId, 'partition spec')
      if (!m['partition-specs'].some((s) => s['spec-id'] === id)) throw badRequest(`unknown partition spec ${id}`)
      if (id !== m['default-spec-id']) change(batch, { 'default-spec-id': id })
      return
    }
    case 'add-sort-order':
      addSortOrder(batch, update['sort-order'])
      return
    case 'set-default-sort-order': {
      const id = chosenId(update['sort-order-id'], batch.lastAddedSortOrderId, 'sort order')
      if (!m['sort-orders'].some((o) => o['order-id'] === id)) throw badRequest(`unknown sort order ${id}`)
      if (id !== m['default-sort-order-id']) change(batch, { 'default-sort-order-id': id })
      return
    }
    case 'add-snapshot': {
      const snapshot = update.snapshot
      const id = snapshot['snapshot-id']
      if (m['format-version'] > maxFormatVersion)
        throw badRequest(`cannot add snapshots to a v${m['format-version']} table`)
      if (m.snapshots.some((s) => s['snapshot-id'] === id)) throw badRequest(`snapshot ${id} already exists`)
      if (
        m['format-version'] >= 2 &&
        snapshot['parent-snapshot-id'] !== undefined &&
        snapshot['sequence-number'] <= m['last-sequence-number']
      ) {
        throw badRequest(
          `cannot add snapshot with sequence number ${snapshot['sequence-number']} older than last sequence number ${m['last-sequence-number']}`,
        )
      }
      batch.addedSnapshotIds.add(id)
      change(batch, {
        snapshots: [...m.snapshots, snapshot],
        'last-sequence-number': snapshot['sequence-number'],
        'last-updated-ms': snapshot['timestamp-ms'],
      })
      return
    }
    case 'set-snapshot-ref': {
      const ref: SnapshotRef = { type: update.type, 'snapshot-id': update['snapshot-id'] }
      // Only the retention fields the update sets, so an unchanged ref compares equal.
      if (update['max-ref-age-ms'] !== undefined) ref['max-ref-age-ms'] = update['max-ref-age-ms']
      if (update['max-snapshot-age-ms'] !== undefined) ref['max-snapshot-age-ms'] = update['max-snapshot-age-ms']
      if (update['min-snapshots-to-keep'] !== undefined) ref['min-snapshots-to-keep'] = update['min-snapshots-to-keep']
      setRef(batch, update['ref-name'], ref, nowMs)
      return
    }
    case 'remove-snapshots':
      removeSnapshots(batch, update['snapshot-ids'])
      return
    case 'remove-snapshot-ref':
      removeRef(batch, update['ref-name'])
      return
    case 'set-location':
      if (m.location !== update.location) change(batch, { location: update.location })
      return
    case 'set-properties':
      // Only a real change counts, so a commit that restates a property writes no new file.
      if (Object.entries(update.updates).some(([key, value]) => m.properties[key] !== value)) {
        change(batch, { properties: { ...m.properties, ...update.updates } })
      }
      return
    case 'remove-properties': {
      if (!update.removals.some((key) => key in m.properties)) return
      const properties = { ...m.properties }
      for (const key of update.removals) delete properties[key]
      change(batch, { properties })
      return
    }
    case 'set-statistics': {
      const id = update.statistics['snapshot-id']
      change(batch, { statistics: [...m.statistics.filter((s) => s['snapshot-id'] !== id), update.statistics] })
      return
    }
    case 'remove-statistics':
      change(batch, { statistics: m.statistics.filter((s) => s['snapshot-id'] !== update['snapshot-id']) })
      return
    case 'set-partition-statistics': {
      const stats = update['partition-statistics']
      const kept = m['partition-statistics'].filter((s) => s['snapshot-id'] !== stats['snapshot-id'])
      change(batch, { 'partition-statistics': [...kept, stats] })
      return
    }
    case 'remove-partition-statistics':
      change(batch, {
        'partition-statistics': m['partition-statistics'].filter((s) => s['snapshot-id'] !== update['snapshot-id']),
      })
      return
    case 'remove-partition-specs': {
      if (update['spec-ids'].includes(m['default-spec-id']))
        throw badRequest('cannot remove the default partition spec')
      change(batch, {
        'partition-specs': m['partition-specs'].filter((s) => !update['spec-ids'].includes(s['spec-id'])),
      })
      return
    }
    case 'remove-schemas': {
      if (update['schema-ids'].includes(m['current-schema-id'])) throw badRequest('cannot remove the current schema')
      change(batch, { schemas: m.schemas.filter((s) => !update['schema-ids'].includes(s['schema-id'])) })
      return
    }
    default: {
      const unknown: { action: string } = update
      throw badRequest(`unknown table update ${unknown.action}`, { action: unknown.action })
    }
  }
}

/**
 * Drops log entries of snapshots added and superseded in this same commit, and, when snapshots
 * were removed, everything before the newest entry whose snapshot is gone.
 */
function cleanSnapshotLog(batch: Batch, baseLength: number): SnapshotLogEntry[] {
  const m = batch.metadata
  const live = new Set(m.snapshots.map((s) => s['snapshot-id']))
  const log: SnapshotLogEntry[] = []
  m['snapshot-log'].forEach((entry, i) => {
    const id = entry['snapshot-id']
    if (!live.has(id)) {
      if (batch.removedSnapshots) log.length = 0
      return
    }
    const intermediate = i >= baseLength && batch.addedSnapshotIds.has(id) && id !== m['current-snapshot-id']
    if (!intermediate) log.push(entry)
  })
  return log
}

/**
 * Applies a commit's updates to the table's metadata as a catalog would. Pure: returns a new
 * object, or `base` itself when nothing changed. `previousMetadataLocation` is the file `base`
 * was read from; it goes to the metadata log.
 */
export function applyUpdates(
  base: TableMetadata,
  updates: readonly TableUpdate[],
  nowMs: number,
  previousMetadataLocation?: string,
): TableMetadata {
  const batch: Batch = { metadata: base, changed: false, addedSnapshotIds: new Set(), removedSnapshots: false }
  for (const update of updates) applyOne(batch, update, nowMs)
  if (!batch.changed) return base

  const snapshotLog = cleanSnapshotLog(batch, base['snapshot-log'].length)
  const fields: Partial<TableMetadata> = { 'snapshot-log': snapshotLog }
  if (previousMetadataLocation !== undefined) {
    const configured = Number.parseInt(batch.metadata.properties[tableProperties.previousVersionsMax] ?? '', 10)
    const max = Math.max(1, Number.isNaN(configured) ? previousVersionsMaxDefault : configured)
    const log = [
      ...base['metadata-log'],
      { 'metadata-file': previousMetadataLocation, 'timestamp-ms': base['last-updated-ms'] },
    ]
    fields['metadata-log'] = log.slice(Math.max(0, log.length - max))
  }
  if (batch.metadata['last-updated-ms'] === base['last-updated-ms']) fields['last-updated-ms'] = nowMs
  const result = { ...batch.metadata, ...fields }

  const updatedMs = result['last-updated-ms']
  const lastLogged = Math.max(
    result['snapshot-log'].at(-1)?.['timestamp-ms'] ?? Number.NEGATIVE_INFINITY,
    result['metadata-log'].at(-1)?.['timestamp-ms'] ?? Number.NEGATIVE_INFINITY,
  )
  if (updatedMs < lastLogged - clockSkewMs) {
    throw badRequest(`last-updated-ms ${updatedMs} is more than a minute before the logs' last entry ${lastLogged}`)
  }
  return result
}

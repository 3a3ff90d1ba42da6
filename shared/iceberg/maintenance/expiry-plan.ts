// Which snapshots an expiry removes, by the rules of Iceberg's ExpireSnapshots: every ref's own
// snapshot stays; each branch keeps its newest ancestors while they are younger than the age limit
// or fewer than the minimum count (the first one failing both ends the run, as in Iceberg Java);
// a snapshot no ref reaches goes once it is older than the age limit. A ref's own
// `max-snapshot-age-ms` / `min-snapshots-to-keep` win over the policy. Snapshots the caller names
// stay whatever their age (Floe keeps the newest snapshot carrying its progress marker).
import { ancestorsOf, type Snapshot, type TableMetadata } from '../metadata/index.ts'

export interface SnapshotRetention {
  /** A snapshot older than this (milliseconds) may go, unless a rule below keeps it. */
  maxSnapshotAgeMs: number
  /** Each branch keeps at least this many of its newest ancestors (its head counts). */
  minSnapshotsToKeep: number
}

export interface ExpiryPlan {
  /** Snapshots removed, oldest first. */
  expire: Snapshot[]
  /** Snapshots kept. */
  retain: Snapshot[]
}

export function planSnapshotExpiry(
  metadata: TableMetadata,
  retention: SnapshotRetention,
  now: number,
  keep: ReadonlySet<bigint> = new Set(),
): ExpiryPlan {
  const retained = new Set<bigint>(keep)
  const referenced = new Set<bigint>()
  for (const ref of Object.values(metadata.refs)) {
    const head = ref['snapshot-id']
    retained.add(head)
    if (ref.type !== 'branch') {
      referenced.add(head)
      continue
    }
    const maxAgeMs =
      ref['max-snapshot-age-ms'] === undefined ? retention.maxSnapshotAgeMs : Number(ref['max-snapshot-age-ms'])
    const minCount = ref['min-snapshots-to-keep'] ?? retention.minSnapshotsToKeep
    let count = 0
    let keeping = true
    for (const snapshot of ancestorsOf(metadata, head)) {
      const id = snapshot['snapshot-id']
      referenced.add(id)
      if (!keeping) continue
      if (count < minCount || snapshot['timestamp-ms'] >= now - maxAgeMs) {
        retained.add(id)
        count++
      } else {
        keeping = false
      }
    }
  }
  const cutoff = now - retention.maxSnapshotAgeMs
  const expire: Snapshot[] = []
  const retain: Snapshot[] = []
  for (const snapshot of metadata.snapshots) {
    const id = snapshot['snapshot-id']
    const young = !referenced.has(id) && snapshot['timestamp-ms'] >= cutoff
    if (retained.has(id) || young) retain.push(snapshot)
    else expire.push(snapshot)
  }
  expire.sort((a, b) => a['timestamp-ms'] - b['timestamp-ms'])
  return { expire, retain }
}

// A routed round on a real catalog (docs/architecture.md, "Markers and the ledger", M1-M5): the
// check (routed-round.ts), the ledger's starts, each table's own compare-and-set commit, the
// ledger's advance, and the ACK (routed-settle.ts), in that order. The dataset's table is the
// ledger: it holds no data, only its marker, moved by commits of no files.
//
// Every commit re-decides inside appendFiles' loop against what it just loaded: a table walks the
// accepted rotations again (walkTable) against its marker and the ledger as read after the
// starts, and the ledger plans its advance (planLedgerAdvance) against itself. A stale read only
// makes claims miss (M3), so no error here is fatal to the round: a table or ledger commit that
// fails or whose outcome is unknown is `unconfirmed`, the ledger waits for it, and the next round
// finds what landed as `behind-table` and sends its participant to re-read with floors.
//
// A table or ledger that already holds this round's commit id (an attempt whose outcome was
// unknown landed, or another coordinator committed the same round) commits nothing more: which
// walk built that commit is not provable from here, so none of it counts as landed. The ledger
// then waits, and the next round sorts it out as above.

import type { OffsetRange, RotationRange } from '../protocol/index.ts'
import { type Catalog, parseTableIdentifier, type TableIdentifier } from '../shared/catalog/index.ts'
import {
  type AppendContent,
  type AppendRequest,
  appendFiles,
  findCommittedSnapshot,
  type RetryPolicy,
} from '../shared/iceberg/commit/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { ancestorsOfRef, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { RoundAck } from './commit-content.ts'
import type { RejectedPartition } from './contiguity.ts'
import { eachBounded } from './each-bounded.ts'
import { planLedgerAdvance } from './ledger.ts'
import {
  type CommittedOffset,
  encodeProgress,
  findMarkerIn,
  floeSummaryKeys,
  generationOffsetsKey,
  mergeProgress,
  offsetsKey,
  type Progress,
  readProgress,
} from './progress.ts'
import { type RotationReport, topicPartitionKey } from './rotation-check.ts'
import { FreshGate, ledgerGate, withPassedFloorsDropped } from './route-gate.ts'
import { readRouteRecord } from './route-record.ts'
import { checkRoutedRound, type RoutedCheck } from './routed-round.ts'
import { landedMarkers, type RoutedAck, routedCutReads, settleRoutedRound, type TableFate } from './routed-settle.ts'
import { type TableWalk, walkTable } from './routed-walk.ts'

export interface RoutedCommitTarget {
  catalog: Catalog
  /** Where manifests and manifest lists go (each table's metadata location). */
  storage: ObjectStorage
  /** The dataset's table: the ledger, which holds no data. */
  ledger: TableIdentifier
  group: string
  retry?: Partial<RetryPolicy>
  now?: () => number
  /** How many tables commit at once. */
  concurrency?: number
  /**
   * The fingerprint of the coordinator's route: every commit passes the gate (the ledger at this
   * route, not switching), and the tables' markers are this route generation's. Absent: the
   * ledger's generation 0, no gate (tests of the round alone).
   */
  route?: string
}

type RetryInfo = Parameters<NonNullable<AppendRequest['onRetry']>>[0]

export interface RoutedCommitRequest {
  commitId: string
  reports: readonly RotationReport[]
  signal?: AbortSignal
  onRetry?: (info: RetryInfo & { table: string }) => void
}

/** One table's commit of the round. */
export interface RoutedTableCommit {
  fate: TableFate
  snapshotId?: bigint
  attempts: number
  /** The files its landed commit added (none unless landed). */
  files: number
  /** Why it did not land, for the caller's log. */
  error?: string
}

export interface RoutedLedgerCommit {
  landed: boolean
  snapshotId?: bigint
  moves: readonly CommittedOffset[]
  /** The ledger before the moves (as the last attempt read it), and after. */
  before: Progress
  after: Progress
  /** Whether the ledger's starts landed (none to commit counts as landed). */
  startsLanded: boolean
}

export interface RoutedCommitResult {
  check: RoutedCheck
  fates: ReadonlyMap<string, TableFate>
  ledger: RoutedLedgerCommit
  ack: RoutedAck
  tables: ReadonlyMap<string, RoutedTableCommit>
  /** Tables named by a claim that could not be loaded at the round's start: the caller logs them. */
  unreadable: Array<{ table: string; error: string }>
  /** Per partition, the span its rotations read this round (the ACK's rejected ranges). */
  reads: ReadonlyMap<string, RotationRange>
}

/** Thrown inside a content callback to stop appendFiles without committing; caught here. */
const giveUp = (commitId: string, table: string, why: string) =>
  new FloeError('COMMIT_REJECTED', `round ${commitId} on ${table}: ${why}`, { details: { commitId, table } })

/** Commits a routed round. Throws only when the ledger cannot be loaded at the start. */
export async function commitRoutedRound(
  target: RoutedCommitTarget,
  request: RoutedCommitRequest,
): Promise<RoutedCommitResult> {
  const { catalog, group } = target
  const { commitId } = request
  const { metadata: ledgerStart } = await catalog.loadTable(target.ledger)
  const ledgerRead = readProgress(ledgerStart, group)
  const gate = ledgerGate(target, ledgerStart)
  if (!gate.open) throw new FloeError('COMMIT_REJECTED', `round ${commitId}: ${gate.why}`, { details: { commitId } })
  const markerKey = generationOffsetsKey(group, gate.generation)
  const markerOf = (metadata: TableMetadata) => findMarkerIn(metadata, markerKey, ancestorsOfRef(metadata)).progress
  const fresh = new FreshGate(target, gate.generation)

  const names = new Set(
    request.reports.flatMap((r) => r.rotations.flatMap((rotation) => (rotation.tables ?? []).map((p) => p.table))),
  )
  const markers = new Map<string, Progress>()
  const unreadable: RoutedCommitResult['unreadable'] = []
  await eachBounded([...names], target.concurrency ?? 8, async (name) => {
    try {
      const { metadata } = await catalog.loadTable(parseTableIdentifier(name))
      markers.set(name, markerOf(metadata))
    } catch (error) {
      unreadable.push({ table: name, error: messageOf(error) })
    }
  })

  const check = checkRoutedRound(ledgerRead, markers, request.reports)
  const starts = await commitStarts(target, request, check.ledgerStarts, ledgerRead, gate.generation)

  const accepted = check.rotations.accepted
  const fates = new Map<string, TableFate>()
  const tables = new Map<string, RoutedTableCommit>()
  const toCommit = [...check.tables].filter(([, walk]) => walk.moves.length > 0).map(([name]) => name)
  await eachBounded(toCommit, target.concurrency ?? 8, async (name) => {
    let walk: TableWalk | undefined
    let attempts = 0
    let alreadyHere = false
    try {
      const result = await appendFiles({
        ...appendBase(target, request, name),
        table: parseTableIdentifier(name),
        content: async (metadata) => {
          attempts++
          walk = walkTable(name, markerOf(metadata), starts.ledger, accepted)
          if (findCommittedSnapshot(metadata, floeSummaryKeys.commitId, commitId)) {
            alreadyHere = true
            throw giveUp(commitId, name, 'the table holds the round already')
          }
          if (walk.moves.length === 0) throw giveUp(commitId, name, 'its walk accepted no part')
          // The gate, asked of a ledger read that starts after this load of the table.
          const now = await fresh.ask()
          if (!now.open) throw giveUp(commitId, name, now.why)
          return markerContent(commitId, markerKey, mergeProgress(walk.marker, walk.moves), walk.files)
        },
      })
      const fate: TableFate = { commit: 'landed', ...(walk ? { walk } : {}) }
      fates.set(name, fate)
      const snapshotId = result.snapshot['snapshot-id']
      tables.set(name, { fate, snapshotId, attempts, files: result.committed.files.length })
    } catch (error) {
      // A walk that accepted nothing commits nothing: nothing of it is pending.
      const nothing = isFloeError(error, 'COMMIT_REJECTED') && !alreadyHere && walk?.moves.length === 0
      const fate: TableFate = { commit: nothing ? 'landed' : 'unconfirmed', ...(walk ? { walk } : {}) }
      fates.set(name, fate)
      tables.set(name, { fate, attempts, files: 0, error: messageOf(error) })
    }
  })

  const ledger = await commitAdvance(target, request, check, fates, starts, gate.generation)
  const ack = settleRoutedRound(check, fates, ledger, landedMarkers(markers, fates))
  return { check, fates, ledger, ack, tables, unreadable, reads: readSpans(request.reports) }
}

interface Starts {
  landed: boolean
  /** The ledger the tables' walks use: as the starts' commit left it, else as first read. */
  ledger: Progress
}

/**
 * The ledger's starts, before any table's commit. One that fails leaves the tables' walks refusing
 * the claims of partitions the ledger lacks (`unknown-to-table`).
 */
async function commitStarts(
  target: RoutedCommitTarget,
  request: RoutedCommitRequest,
  starts: readonly CommittedOffset[],
  read: Progress,
  generation: number,
): Promise<Starts> {
  if (starts.length === 0) return { landed: true, ledger: read }
  // Its own commit id: the advance's loop must not take this commit for its own landed attempt.
  const commitId = `${request.commitId}:ledger-starts`
  let seen = read
  let closed = false
  try {
    const result = await appendFiles({
      ...appendBase(target, { ...request, commitId }, formatName(target.ledger)),
      table: target.ledger,
      content: (metadata) => {
        const gate = ledgerGate(target, metadata)
        closed = !gate.open || gate.generation !== generation
        if (closed) throw giveUp(commitId, 'the ledger', 'its route generation moved')
        seen = readProgress(metadata, target.group)
        const lacking = starts.filter((s) => seen.get(s.topic)?.get(s.partition) === undefined)
        if (lacking.length === 0) throw giveUp(commitId, 'the ledger', 'every start is there already')
        return markerContent(commitId, offsetsKey(target.group), mergeProgress(seen, lacking), [])
      },
    })
    return { landed: true, ledger: readProgress(result.metadata, target.group) }
  } catch (error) {
    // Another coordinator started them meanwhile: its starts are the ones the walks must use.
    if (isFloeError(error, 'COMMIT_REJECTED') && !closed) return { landed: true, ledger: seen }
    return { landed: false, ledger: read }
  }
}

/** The ledger's advance over the cuts every table with rows of them landed (M2). */
async function commitAdvance(
  target: RoutedCommitTarget,
  request: RoutedCommitRequest,
  check: RoutedCheck,
  fates: ReadonlyMap<string, TableFate>,
  starts: Starts,
  generation: number,
): Promise<RoutedLedgerCommit> {
  const { commitId } = request
  const reads = routedCutReads(check, fates)
  let before = starts.ledger
  let moves: CommittedOffset[] = []
  const outcome = (landed: boolean, snapshotId?: bigint): RoutedLedgerCommit => ({
    landed,
    ...(snapshotId === undefined ? {} : { snapshotId }),
    moves: landed ? moves : [],
    before,
    after: landed ? mergeProgress(before, moves) : before,
    startsLanded: starts.landed,
  })
  // Nothing moves it against the freshest ledger known: no commit (a newer one is only further on).
  if (planLedgerAdvance(before, reads).moves.length === 0) return outcome(false)
  try {
    const result = await appendFiles({
      ...appendBase(target, request, formatName(target.ledger)),
      table: target.ledger,
      content: (metadata: TableMetadata) => {
        const gate = ledgerGate(target, metadata)
        if (!gate.open || gate.generation !== generation) {
          moves = []
          throw giveUp(commitId, 'the ledger', 'its route generation moved')
        }
        before = readProgress(metadata, target.group)
        moves = planLedgerAdvance(before, reads).moves
        if (findCommittedSnapshot(metadata, floeSummaryKeys.commitId, commitId)) {
          moves = []
          throw giveUp(commitId, 'the ledger', 'the ledger holds the round already')
        }
        if (moves.length === 0) throw giveUp(commitId, 'the ledger', 'no cut moves it')
        const after = mergeProgress(before, moves)
        return withPassedFloorsDropped(
          target.group,
          readRouteRecord(metadata, target.group),
          after,
          markerContent(commitId, offsetsKey(target.group), after, []),
        )
      },
    })
    return outcome(true, result.snapshot['snapshot-id'])
  } catch {
    return outcome(false)
  }
}

function appendBase(target: RoutedCommitTarget, request: RoutedCommitRequest, table: string) {
  const { onRetry, signal } = request
  return {
    catalog: target.catalog,
    storage: target.storage,
    commitId: request.commitId,
    commitIdKey: floeSummaryKeys.commitId,
    ...(target.retry ? { retry: target.retry } : {}),
    ...(target.now ? { now: target.now } : {}),
    ...(signal ? { signal } : {}),
    ...(onRetry ? { onRetry: (info: RetryInfo) => onRetry({ ...info, table }) } : {}),
  }
}

/**
 * The files and the marker, as planCommit writes a one-table round's (summary and table property,
 * invariant 8): readProgress reads a routed table's and the ledger's markers the same way.
 */
function markerContent(commitId: string, key: string, marker: Progress, files: readonly DataFile[]): AppendContent {
  const paths = new Set<string>()
  for (const file of files) {
    if (paths.has(file.filePath)) {
      throw new FloeError('INVARIANT_BROKEN', `round ${commitId} lists data file ${file.filePath} twice`, {
        details: { commitId, filePath: file.filePath },
      })
    }
    paths.add(file.filePath)
  }
  const encoded = encodeProgress(marker)
  return {
    files,
    summary: { [floeSummaryKeys.commitId]: commitId, [key]: encoded },
    properties: { [key]: encoded },
  }
}

const formatName = (table: TableIdentifier) => [...table.namespace, table.name].join('.')

/** Per partition, from the lowest start to the highest end its rotations read. */
function readSpans(reports: readonly RotationReport[]): Map<string, RotationRange> {
  const spans = new Map<string, RotationRange>()
  for (const range of reports.flatMap((r) => r.rotations.flatMap((rotation) => rotation.ranges))) {
    const key = topicPartitionKey(range.topic, range.partition)
    const known = spans.get(key)?.range
    const span: OffsetRange = known
      ? {
          start: lower(known.start, range.range.start),
          end: lower(range.range.end, known.end) === known.end ? range.range.end : known.end,
        }
      : range.range
    spans.set(key, { topic: range.topic, partition: range.partition, range: span })
  }
  return spans
}

const lower = (x: bigint, y: bigint): bigint => (x < y ? x : y)

/**
 * The machine's RoundAck of a routed round: committed = the ledger's landed moves (no files: the
 * rotations are named instead), rejected = where to read again, from the ledger, with the tables
 * ahead of it as skip floors.
 */
export function routedRoundAck(commitId: string, result: RoutedCommitResult): RoundAck {
  const { ledger, ack } = result
  const committed = ack.committedOffsets.map(({ topic, partition, offset }) => {
    const start = ledger.before.get(topic)?.get(partition) ?? offset
    return { topic, partition, range: { start, end: offset }, offset, filePaths: [] }
  })
  const rejected = ack.rejections.map(({ topic, partition, reason, rereadFrom, floors }): RejectedPartition => {
    const read = result.reads.get(topicPartitionKey(topic, partition))?.range
    return {
      topic,
      partition,
      reason,
      tableOffset: rereadFrom,
      range: read ?? { start: rereadFrom ?? 0n, end: rereadFrom ?? 0n },
      skipFloors: floors.map(({ table, offset }) => ({ table, offset })),
    }
  })
  return {
    commitId,
    snapshotId: ledger.landed ? ledger.snapshotId : undefined,
    committed,
    rejected,
    lost: [],
    acceptedRotations: ack.acceptedRotations,
  }
}

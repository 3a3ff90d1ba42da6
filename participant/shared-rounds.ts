// A round's side of the shared WAL: the snapshot a round's flushes share (one cut, then every
// uncommitted rotation's files uploaded), each partition's summary over it, and the one
// WRITE-STATUS composed from them. Kept apart from SharedWal, which owns the log and its queue,
// because this part only reads rotations: it never changes the log.
//
// A round's WRITE-STATUS reports only the oldest rotations whose every partition is in the
// message, so its summaries and its rotations always agree (the coordinator takes a status whole
// or not at all). A summary is only ever sent beside the rotations it was made over: a round
// whose snapshot is no longer held (rounds kept are counted in the order they began, and storage
// that wakes finishes old rounds' uploads after newer ones) answers `error` for its partitions,
// which keep their rotations for the next round.
import type { PartitionWriteStatus, RotationStatus } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { FlushInput } from './machine/index.ts'
import { type ChainState, sharedStatus } from './shared-status.ts'
import type { SharedRotation, SharedSegment } from './wal/index.ts'

/** Rounds whose snapshot is kept for a late flush, the composition and the ACK. */
const roundsKept = 4

interface RoundSnapshot {
  /** The uncommitted rotations at the round's cut, oldest first, every file uploaded. */
  rotations: readonly SharedRotation[]
  files: Map<string, DataFile>
  /** The chains of the partitions that flushed this round. */
  chains: Map<number, ChainState>
  /** The rotations the round's last WRITE-STATUS reported (what its ACK is about). */
  reported: RotationStatus[]
}

export interface SharedRoundsOptions {
  /** Cuts the log for the round and lists the rotations it reports, oldest first (on the WAL's queue). */
  cut(): Promise<readonly SharedRotation[]>
  /** The segment's data file, uploading it first if it is not yet. */
  upload(segment: SharedSegment): Promise<DataFile>
}

/** A round's snapshot as it is being made, and once made. */
interface Round {
  made: Promise<RoundSnapshot>
  snapshot?: RoundSnapshot
}

export class SharedRounds {
  readonly #o: SharedRoundsOptions
  /** The newest rounds, in the order they began. */
  readonly #rounds = new Map<string, Round>()
  /** The oldest record timestamp per partition since the last cut, and per rotation. */
  #oldestOpen = new Map<number, number>()
  readonly #oldest = new Map<string, Map<number, number>>()

  constructor(options: SharedRoundsOptions) {
    this.#o = options
  }

  /** A batch with this oldest record timestamp was appended for the partition. */
  appended(partition: number, oldestTimestampMs: number | undefined): void {
    if (oldestTimestampMs === undefined) return
    const before = this.#oldestOpen.get(partition)
    if (before === undefined || oldestTimestampMs < before) this.#oldestOpen.set(partition, oldestTimestampMs)
  }

  /** The log was cut into `rotation`: what was appended since the last cut is its. */
  cut(rotation: SharedRotation): void {
    this.#oldest.set(rotation.id, this.#oldestOpen)
    this.#oldestOpen = new Map()
  }

  /** The rotation left the log (committed or dropped). */
  forget(rotation: SharedRotation): void {
    this.#oldest.delete(rotation.id)
  }

  /** What round `commitId`'s last WRITE-STATUS reported. */
  reported(commitId: string): readonly RotationStatus[] {
    return this.#rounds.get(commitId)?.snapshot?.reported ?? []
  }

  /**
   * END-COMMIT of one partition: its summary over the round's snapshot (made by the first flush of
   * the round), or `gap` when its ranges do not chain from its chain start.
   */
  async flush(partition: number, input: FlushInput): Promise<PartitionWriteStatus | 'gap'> {
    const snapshot = await this.#snapshot(input.commitId)
    const chain: ChainState = {
      topic: input.topic,
      partition,
      chainStart: input.chainStart,
      origin: input.origin,
      ...(input.logStartJump ? { logStartJump: input.logStartJump } : {}),
    }
    const { statuses, gaps } = sharedStatus({
      chains: [chain],
      rotations: snapshot.rotations,
      uploaded: snapshot.files,
    })
    if (gaps.length > 0) return 'gap'
    snapshot.chains.set(partition, chain)
    return statuses[0] as PartitionWriteStatus
  }

  /**
   * The round's WRITE-STATUS from the statuses its partitions handed in: the summaries over the
   * oldest rotations whose every partition flushed, and those rotations.
   */
  compose(
    commitId: string,
    statuses: readonly PartitionWriteStatus[],
  ): { statuses: PartitionWriteStatus[]; rotations: RotationStatus[] } {
    const snapshot = this.#rounds.get(commitId)?.snapshot
    if (!snapshot) return { statuses: statuses.map(unbacked), rotations: [] }
    const chains: ChainState[] = []
    const others: PartitionWriteStatus[] = []
    for (const status of statuses) {
      const chain = snapshot.chains.get(status.partition)
      if (chain) chains.push(chain)
      else others.push(unbacked(status))
    }
    const flushed = new Set(chains.map((chain) => chain.partition))
    const prefix: SharedRotation[] = []
    for (const rotation of snapshot.rotations) {
      if (rotation.ranges.some((range) => !flushed.has(range.partition))) break
      prefix.push(rotation)
    }
    for (const chain of chains) {
      const oldest = this.#oldestOf(chain.partition, prefix)
      if (oldest === undefined) delete chain.oldestTimestampMs
      else chain.oldestTimestampMs = oldest
    }
    const status = sharedStatus({ chains, rotations: prefix, uploaded: snapshot.files })
    snapshot.reported = status.rotations
    return {
      statuses: [...status.statuses, ...others].sort((a, b) => a.partition - b.partition),
      rotations: status.rotations,
    }
  }

  /** The snapshot of round `commitId`: one cut, then every listed rotation's files uploaded. */
  #snapshot(commitId: string): Promise<RoundSnapshot> {
    const known = this.#rounds.get(commitId)
    if (known) return known.made
    const made = this.#o.cut().then(async (rotations) => {
      const files = new Map<string, DataFile>()
      const segments = rotations.flatMap((rotation) => rotation.segments)
      const uploaded = await Promise.all(segments.map((segment) => this.#o.upload(segment)))
      for (const [i, segment] of segments.entries()) files.set(segment.uuid, uploaded[i] as DataFile)
      const snapshot: RoundSnapshot = { rotations, files, chains: new Map(), reported: [] }
      // held only while the round is among the newest begun, whenever its uploads finish
      if (this.#rounds.get(commitId) === round) round.snapshot = snapshot
      return snapshot
    })
    const round: Round = { made }
    this.#rounds.set(commitId, round)
    for (const id of [...this.#rounds.keys()].slice(0, -roundsKept)) this.#rounds.delete(id)
    // a failed snapshot is made again by the round's next flush
    made.catch(() => {
      if (this.#rounds.get(commitId) === round) this.#rounds.delete(commitId)
    })
    return made
  }

  #oldestOf(partition: number, rotations: readonly SharedRotation[]): number | undefined {
    let oldest: number | undefined
    for (const rotation of rotations) {
      const ms = this.#oldest.get(rotation.id)?.get(partition)
      if (ms !== undefined && (oldest === undefined || ms < oldest)) oldest = ms
    }
    return oldest
  }
}

/** A status the round's snapshot does not back: a summary without its rotations would claim rows no file holds. */
function unbacked(status: PartitionWriteStatus): PartitionWriteStatus {
  if (status.kind !== 'written') return status
  const { topic, partition } = status
  return { kind: 'error', topic, partition, message: 'the round this summary was made for is no longer held' }
}

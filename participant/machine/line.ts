// Is a participant in line with the table? The questions its machine asks of START-COMMIT and
// ACK-COMMIT, as functions of data. Pure.
import type { LogStartJump, PartitionAcks, PartitionWriteStatus, RangeOrigin } from '../../protocol/index.ts'
import type { PartitionAckOutcome } from './types.ts'

export interface Chain {
  /** Where the uncommitted chain starts (undefined before the first sync). */
  start: bigint | undefined
  origin: RangeOrigin
  logStartJump: LogStartJump | undefined
}

/**
 * START-COMMIT carries the table's next offset for the partition. The participant is in line when
 * its chain starts there; or across a log-start jump from there (the coordinator will accept that
 * gap); or, for a partition the table has never seen, when its chain did not start from a table
 * offset. Anything else (a commit it missed the ACK of, a table rolled back or recreated, a zombie's
 * commit) means its files would be rejected at the end of the round: better to resync now.
 */
export function isOutOfLine(chain: Chain, tableOffset: bigint | undefined): boolean {
  if (chain.start === undefined) return false
  if (tableOffset === undefined) return chain.origin === 'table'
  if (chain.start === tableOffset) return false
  const jump = chain.logStartJump
  return !(jump && jump.from === tableOffset && jump.to === chain.start)
}

/**
 * A log-start jump that a table (or chain) at `offset` has not passed: it stays declared. Once the
 * table is past its start the jump is committed, and nothing of it is owed any more.
 */
export function jumpAhead(jump: LogStartJump | undefined, offset: bigint): LogStartJump | undefined {
  return jump && jump.from >= offset ? jump : undefined
}

/** What an ACK says about one partition. */
export function partitionOutcome(ack: PartitionAcks, topic: string, partition: number): PartitionAckOutcome {
  const committed = ack.committed.find((c) => c.topic === topic && c.partition === partition)
  if (committed) return { kind: 'committed', offset: committed.offset, filePaths: committed.filePaths }
  const rejected = ack.rejected.find((r) => r.topic === topic && r.partition === partition)
  if (rejected) return { kind: 'rejected', reason: rejected.reason, tableOffset: rejected.tableOffset }
  return { kind: 'not-included' }
}

/**
 * The ACK committed what this participant reported: the table's new offset is the end of the
 * reported range. A commit to any other offset was someone else's (an older owner's status, a
 * second coordinator): the participant's chain no longer starts at the table's offset.
 */
export function committedOurs(outcome: PartitionAckOutcome, reported: PartitionWriteStatus | undefined): boolean {
  return outcome.kind === 'committed' && reported?.kind === 'written' && outcome.offset === reported.range.end
}

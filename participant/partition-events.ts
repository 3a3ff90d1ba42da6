// The log lines of a partition's control machine: what it emitted, at the level an operator acts
// on (warn: the partition reads again or a round goes without it; info: assignment changes).
import type { Logger } from '../shared/telemetry/index.ts'
import type { ParticipantEmitted } from './machine/index.ts'

export function logParticipantEvent(logger: Logger, partition: number, event: ParticipantEmitted): void {
  switch (event.type) {
    case 'participant.sync-failed':
      logger.warn({ partition, reason: event.reason, err: event.message }, 'partition sync failed; retrying')
      return
    case 'participant.out-of-line':
      logger.warn(
        {
          partition,
          commitId: event.commitId,
          tableOffset: String(event.tableOffset),
          chainStart: String(event.chainStart),
        },
        'out of line with the table: repositioning from its offset',
      )
      return
    case 'participant.status-failed':
      logger.warn({ partition, commitId: event.commitId, stage: event.stage, err: event.message }, 'no status sent')
      return
    case 'participant.rejected':
      logger.warn(
        { partition, commitId: event.commitId, reason: event.reason, tableOffset: String(event.tableOffset) },
        'range rejected: reading again from the table offset',
      )
      return
    case 'participant.committed-elsewhere':
      logger.warn(
        { partition, commitId: event.commitId, offset: String(event.offset) },
        'the table moved past another range: reading again from its offset',
      )
      return
    case 'participant.acknowledge-failed':
      logger.warn({ partition, commitId: event.commitId, err: event.message }, 'could not delete committed files')
      return
    case 'participant.revoked':
      logger.info({ partition, rotated: event.rotated }, 'partition revoked')
      return
    case 'participant.round-missed':
      // an EMPTY answer is never committed: nothing was missed
      if (event.reported === 'empty') logger.debug({ partition, commitId: event.commitId }, 'round closed, nothing new')
      else logger.info({ partition, commitId: event.commitId }, 'round closed without this partition; files kept')
      return
    default:
      logger.debug({ partition, event: event.type }, 'participant event')
  }
}

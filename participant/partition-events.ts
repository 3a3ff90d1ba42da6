// The log lines of a partition's control machine: what it emitted, at the level an operator acts
// on (warn: the partition reads again or a round goes without it; info: assignment changes).
import type { Logger } from '../shared/telemetry/index.ts'
import type { ParticipantEmitted } from './machine/index.ts'

/** A sync that fails the same way again within this long is logged at debug, not warn. */
const repeatQuietMs = 60_000

/**
 * The logger of one partition's events. A sync retried every second for the same reason (the
 * catalog down, a route switch not yet made) warns once a minute with how often it failed since,
 * not on every try.
 */
export function participantEventLogger(logger: Logger, partition: number): (event: ParticipantEmitted) => void {
  let warned: { message: string; at: number; since: number } | undefined
  return (event) => {
    if (event.type !== 'participant.sync-failed') {
      if (event.type === 'participant.synced') warned = undefined
      logParticipantEvent(logger, partition, event)
      return
    }
    const now = Date.now()
    if (warned?.message === event.message && now - warned.at < repeatQuietMs) {
      warned.since++
      logger.debug({ partition, reason: event.reason, err: event.message }, 'partition sync failed; retrying')
      return
    }
    const repeated = warned?.message === event.message ? { failedSince: warned.since } : {}
    logger.warn({ partition, reason: event.reason, err: event.message, ...repeated }, 'partition sync failed; retrying')
    warned = { message: event.message, at: now, since: 0 }
  }
}

function logParticipantEvent(logger: Logger, partition: number, event: ParticipantEmitted): void {
  switch (event.type) {
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

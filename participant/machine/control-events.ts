// protocol/'s control messages as events of one partition's machine. Pure: the runner routes
// messages of its datasets and groups here.
import { type ControlMessage, partitionAcksOf } from '../../protocol/index.ts'
import { partitionOutcome } from './line.ts'
import type { ParticipantEvent } from './types.ts'

/**
 * The event for one partition's machine, or undefined for a message it does not act on. A
 * rejection without a table offset means the table never saw the partition.
 */
export function participantEventOf(
  message: ControlMessage,
  topic: string,
  partition: number,
): ParticipantEvent | undefined {
  const body = message.body
  switch (body.type) {
    case 'StartCommit':
      return {
        type: 'control.start-commit',
        commitId: message.commitId,
        tableOffset: body.tableOffsets.find((o) => o.topic === topic && o.partition === partition)?.offset,
      }
    case 'EndCommit':
      // Answered even when not in expectedPartitions: a partition added to the topic after the
      // coordinator counted is committed too, just not waited for.
      return { type: 'control.end-commit', commitId: message.commitId }
    case 'CommitAcked': {
      const outcome = partitionOutcome(partitionAcksOf(body), topic, partition)
      return { type: 'control.commit-acked', commitId: message.commitId, outcome }
    }
    default:
      return undefined
  }
}

// The participant's control machine: one xstate actor per assigned Kafka partition,
// with the pure questions it asks of START-COMMIT and ACK-COMMIT. The runner provides the actors
// (`participantMachine.provide({ actors })`) and feeds it the events participantEventOf makes
// of control messages. Internal: participant.setup.ts (the vocabulary participantMachine is made
// of) and the tests.

export { participantEventOf } from './control-events.ts'
export { type Chain, committedOurs, isOutOfLine, jumpAhead, partitionOutcome } from './line.ts'
export { isWriting, type ParticipantSnapshot, participantMachine } from './participant.machine.ts'
export type {
  AcknowledgeInput,
  FlushInput,
  HoldInput,
  ParticipantContext,
  ParticipantEmitted,
  ParticipantEvent,
  ParticipantInput,
  PartitionAckOutcome,
  PartitionRef,
  RevokeInput,
  SendStatusInput,
  SyncInput,
  SyncReason,
  SyncRequest,
  SyncResult,
} from './types.ts'

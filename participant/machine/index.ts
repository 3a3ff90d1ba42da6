// The participant's control machine: one xstate actor per assigned Kafka partition,
// with the pure questions it asks of START-COMMIT and ACK-COMMIT. The runner provides the actors
// (`participantMachine.provide({ actors })`) and feeds it the events participantEventOf makes
// of control messages. Every file here is re-exported; only the tests are not.
export { type Chain, committedOurs, isOutOfLine, partitionOutcome } from './line.ts'
export { isWriting, type ParticipantSnapshot, participantMachine } from './participant.machine.ts'
export type {
  AckForPartitions,
  AcknowledgeInput,
  FlushInput,
  HoldInput,
  LogStartJump,
  OffsetRange,
  ParticipantContext,
  ParticipantEmitted,
  ParticipantEvent,
  ParticipantInput,
  PartitionAckOutcome,
  PartitionRef,
  PartitionWriteStatus,
  RangeOrigin,
  RevokeInput,
  SendStatusInput,
  SyncInput,
  SyncReason,
  SyncRequest,
  SyncResult,
} from './types.ts'
export { participantEventOf, partitionStatusToWire } from './wire.ts'

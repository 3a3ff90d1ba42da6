// The participant: per assigned Kafka partition, the record path — consume, decode, WAL, upload —
// and the answers to the coordinator's rounds. Imports protocol/ and shared/, never
// coordinator/. Files not re-exported here are internal to participant/.
export {
  Backpressure,
  DatasetBackpressure,
  type PressureSource,
  systemClock,
  systemTimers,
  walDiskUsage,
} from './backpressure/index.ts'
export { DatasetParticipant } from './dataset-participant.ts'
export { type EarlierRouteFloors, EarlierRoutes } from './earlier-routes.ts'
export type { DatasetParticipantOptions, ParticipantTable } from './participant-options.ts'
export { Uploader, UploadQueue } from './upload/index.ts'
export { lockWalDir, processAlive, WAL_LOCK_FILE, type WalLock } from './wal-lock.ts'

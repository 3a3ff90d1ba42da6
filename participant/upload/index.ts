// The participant's upload step: ready WAL segments become Iceberg data files in object storage
// (object name from the segment's UUID, retried until it lands), each with a bloom-filter
// sidecar when the dataset names bloom-filter columns (docs/bloom-sidecar.md). Files not
// re-exported here (local-file.ts) are internal to participant/upload.
export { bloomHash, plainEncoded } from './bloom-hash.ts'
export {
  BloomSidecar,
  encodeBloomSidecar,
  probeBloomSidecar,
  readBloomSidecar,
  type SidecarFilter,
  sidecarMagic,
  sidecarVersion,
  writeBloomSidecar,
} from './bloom-sidecar.ts'
export { UploadQueue, type UploadQueueOptions } from './queue.ts'
export { bloomSidecarLocation, dataObjectLocation, type ReadySegment } from './segment.ts'
export {
  systemClock,
  type UploadCallOptions,
  type UploadClock,
  type UploadedObject,
  Uploader,
  type UploaderOptions,
  type UploadLogEvent,
  type UploadRetryOptions,
} from './uploader.ts'

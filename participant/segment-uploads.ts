// The uploads of one partition's ready segments: started at rotation (so a round's END finds most
// of them done), awaited by the flush, one upload per segment however often it is asked for. A
// failed upload is forgotten, so that the next flush starts it again; a segment recovery found
// already uploaded (its sidecar names the object) is not uploaded again.
import type { DataFile } from '../shared/iceberg/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import type { FloeMetrics, Logger } from '../shared/telemetry/index.ts'
import type { ReadySegment as UploadSegment } from './upload/index.ts'
import { bloomSidecarLocation, type UploadQueue } from './upload/index.ts'

/** A segment to upload: one layout's ready file, with the upload location recovery found in its sidecar. */
export type UploadableSegment = UploadSegment & {
  readonly uploadedLocation?: string | undefined
  /** A routed dataset's segment: the table (`namespace.table`) whose data location it goes to. */
  readonly table?: string | undefined
}

/** The WAL that holds a segment: records where it was uploaded, in its sidecar. */
export interface UploadRecorder<S> {
  markUploaded(segment: S, location: string): Promise<unknown>
}

export interface SegmentUploadsOptions {
  /** The Kafka partition, for the log lines; none for a dataset's shared segments. */
  partition?: number
  dataset: string
  uploads: UploadQueue
  dataLocation: string
  /**
   * A routed dataset: where a table's data files go, once the table is ready (made on first use).
   * Each routed segment goes under its own table's location, so that table's maintenance owns it.
   */
  routedLocation?: (table: string) => Promise<string>
  metrics: FloeMetrics
  logger: Logger
  /** Data file location -> its bloom-filter sidecar, shared by the dataset's partitions for the WRITE-STATUS. */
  sidecars: Map<string, string>
  /** An upload settled: the backlog changed. */
  settled(): void
}

export class SegmentUploads {
  readonly #o: SegmentUploadsOptions
  readonly #started = new Map<string, Promise<DataFile>>()
  /** Where each uploaded segment went, by UUID, to forget its sidecar entry with it. */
  readonly #locations = new Map<string, string>()

  constructor(options: SegmentUploadsOptions) {
    this.#o = options
  }

  /** The segment's DataFile once it is in storage. */
  start<S extends UploadableSegment>(log: UploadRecorder<S>, segment: S): Promise<DataFile> {
    const started = this.#started.get(segment.uuid)
    if (started) return started
    const stored =
      segment.uploadedLocation === undefined
        ? this.#put(log, segment)
        : Promise.resolve({ ...segment.dataFile, filePath: segment.uploadedLocation })
    const upload = stored.then((file) => {
      this.#locations.set(segment.uuid, file.filePath)
      if (segment.bloomFilters.length > 0) this.#o.sidecars.set(file.filePath, bloomSidecarLocation(file.filePath))
      return file
    })
    this.#started.set(segment.uuid, upload)
    upload.catch(() => {
      if (this.#started.get(segment.uuid) === upload) this.#started.delete(segment.uuid)
    })
    return upload
  }

  /** The segment left the WAL (committed, or dropped by a resync). */
  forget(uuid: string): void {
    this.#started.delete(uuid)
    const location = this.#locations.get(uuid)
    if (location === undefined) return
    this.#locations.delete(uuid)
    this.#o.sidecars.delete(location)
  }

  /** Forgets every segment but these. */
  keepOnly(uuids: ReadonlySet<string>): void {
    for (const uuid of [...this.#started.keys()]) if (!uuids.has(uuid)) this.forget(uuid)
  }

  #locationOf(segment: UploadableSegment): Promise<string> | string {
    if (segment.table === undefined) return this.#o.dataLocation
    const routed = this.#o.routedLocation
    if (routed === undefined) {
      throw new FloeError(
        'INVARIANT_BROKEN',
        `segment ${segment.uuid} of table ${segment.table} in a dataset without a route`,
      )
    }
    return routed(segment.table)
  }

  async #put<S extends UploadableSegment>(log: UploadRecorder<S>, segment: S): Promise<DataFile> {
    const { uploads, metrics, logger, dataset, partition } = this.#o
    try {
      const file = await uploads.enqueue(segment, await this.#locationOf(segment))
      // the sidecar records the object, so a restart does not upload it again; a log closed
      // meanwhile (resync, revoke) no longer holds the segment
      await log.markUploaded(segment, file.filePath).catch(() => undefined)
      metrics.uploads.inc({ dataset, outcome: 'ok' })
      return file
    } catch (error) {
      metrics.uploads.inc({ dataset, outcome: 'error' })
      // the segment left the WAL while its upload waited (a revoke or resync dropped it): expected
      if (isFloeError(error, 'STORAGE_NOT_FOUND') && !this.#started.has(segment.uuid)) throw error
      logger.warn(
        {
          partition,
          segment: segment.uuid,
          code: error instanceof FloeError ? error.code : undefined,
          err: messageOf(error),
        },
        'upload failed; the next round tries again',
      )
      throw error
    } finally {
      this.#o.settled()
    }
  }
}

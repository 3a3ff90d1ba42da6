// The ready side of a shared WAL: the uncommitted rotations on disk, oldest first, and the
// operations on their files (upload bookkeeping, deletion manifest first, finding the files no
// rotation holds). SharedLog queues every call; nothing here runs two at a time.
import { basename } from 'node:path'
import { deleteWalFiles, listWalDirectory } from './durable.ts'
import {
  decodeSharedSidecar,
  encodeSharedSidecar,
  type SharedRotation,
  type SharedSegment,
} from './rotation-manifest.ts'
import { parseSharedFileName, sharedTemporaryName } from './shared-names.ts'
import { recordUpload, type SidecarCodec } from './sidecar.ts'

const sidecarCodec: SidecarCodec<SharedSegment> = {
  encode: encodeSharedSidecar,
  decode: decodeSharedSidecar,
  temporaryName: sharedTemporaryName,
}

export class ReadyRotations {
  readonly #dir: string
  #rotations: SharedRotation[]

  constructor(dir: string, recovered: readonly SharedRotation[]) {
    this.#dir = dir
    this.#rotations = [...recovered]
  }

  get list(): readonly SharedRotation[] {
    return this.#rotations
  }

  /** Bytes of ready files not yet uploaded. */
  get unuploadedBytes(): number {
    let bytes = 0
    for (const rotation of this.#rotations) {
      for (const segment of rotation.segments) if (segment.uploadedLocation === undefined) bytes += segment.sizeBytes
    }
    return bytes
  }

  add(rotation: SharedRotation): void {
    this.#rotations.push(rotation)
  }

  /** Manifest first (once it is gone the rotation no longer exists), then its files. */
  async delete(doomed: readonly SharedRotation[]): Promise<SharedRotation[]> {
    if (doomed.length === 0) return []
    await deleteWalFiles(
      this.#dir,
      doomed.map((rotation) => basename(rotation.manifestPath)),
    )
    await deleteWalFiles(
      this.#dir,
      doomed.flatMap((rotation) =>
        rotation.segments.flatMap((segment) => [basename(segment.jsonPath), basename(segment.localPath)]),
      ),
    )
    const gone = new Set(doomed.map((rotation) => rotation.id))
    this.#rotations = this.#rotations.filter((rotation) => !gone.has(rotation.id))
    return [...doomed]
  }

  /** Records where a segment was uploaded, in its sidecar; undefined if no rotation holds it any more. */
  async markUploaded(uuid: string, location: string): Promise<SharedSegment | undefined> {
    const index = this.#rotations.findIndex((rotation) => rotation.segments.some((segment) => segment.uuid === uuid))
    const rotation = this.#rotations[index]
    const current = rotation?.segments.find((segment) => segment.uuid === uuid)
    if (!rotation || !current) return undefined
    const updated = await recordUpload(current, location, sidecarCodec)
    this.#rotations[index] = {
      ...rotation,
      segments: rotation.segments.map((segment) => (segment.uuid === uuid ? updated : segment)),
    }
    return updated
  }

  /** Files of this layout that no known rotation holds: a cut or a write cut short. */
  async strayFiles(): Promise<string[]> {
    const names = await listWalDirectory(this.#dir)
    const known = new Set<string>()
    for (const rotation of this.#rotations) {
      known.add(basename(rotation.manifestPath))
      for (const segment of rotation.segments) {
        known.add(basename(segment.localPath))
        known.add(basename(segment.jsonPath))
      }
    }
    return names.filter((name) => parseSharedFileName(name) !== undefined && !known.has(name))
  }
}

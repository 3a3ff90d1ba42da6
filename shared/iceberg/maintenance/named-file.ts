// Reading a file the table's metadata names, for the maintenance steps that decide what to delete
// from what those files say: a named file that is missing stops the step, since what it named is
// then unknown and deleting anything beside it would be a guess.
import { FloeError, isFloeError, messageOf } from '../../errors.ts'
import type { ObjectStorage } from '../../storage/index.ts'

export async function readNamedFile(storage: ObjectStorage, location: string): Promise<Uint8Array> {
  try {
    return await storage.get(location)
  } catch (error) {
    if (!isFloeError(error, 'STORAGE_NOT_FOUND')) throw error
    throw new FloeError('STORAGE_NOT_FOUND', `${location} is named by the table but missing: ${messageOf(error)}`, {
      cause: error,
      details: { location },
    })
  }
}

// Errors of the local WAL file being uploaded. A missing file cannot come back by retrying (the
// WAL deleted it, or recovery did): STORAGE_NOT_FOUND, which is not retryable. Anything else on
// the local disk (EIO, EMFILE) may pass: STORAGE_UNAVAILABLE.
import { stat } from 'node:fs/promises'
import { FloeError } from '../../shared/index.ts'

export function localFileFailure(error: unknown, localPath: string): unknown {
  if (error instanceof FloeError || (error as Error | undefined)?.name === 'AbortError') return error
  const errno = (error as NodeJS.ErrnoException | undefined)?.code
  const details = { localPath, errno }
  if (errno === 'ENOENT' || errno === 'ENOTDIR') {
    return new FloeError('STORAGE_NOT_FOUND', `segment file ${localPath} does not exist`, { cause: error, details })
  }
  return new FloeError('STORAGE_UNAVAILABLE', `cannot read segment file ${localPath}: ${errno ?? 'error'}`, {
    cause: error,
    details,
  })
}

/** The size of the local file, or the error above. */
export async function localFileSize(localPath: string): Promise<number> {
  try {
    const info = await stat(localPath)
    if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' })
    return info.size
  } catch (error) {
    throw localFileFailure(error, localPath)
  }
}

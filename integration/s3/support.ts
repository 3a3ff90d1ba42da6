// Shared by the S3 tests: the stack's S3 server (`stack up --s3`), a storage client on it, and the
// reason a test cannot run when the stack has none (CI starts it, and a skip fails CI).
import { S3Storage } from '../../shared/storage/index.ts'
import { endpoints } from '../harness.ts'
import type { Endpoints } from '../stack/index.ts'

export function s3Endpoints(): NonNullable<Endpoints['s3']> {
  const s3 = endpoints().s3
  if (!s3) throw new Error('the stack has no S3 server: start it with --s3 (or FLOE_STACK_S3=1)')
  return s3
}

/** Why an S3 test cannot run (a reason for `skip`), or false when the stack has the S3 server. */
export function withoutS3(): string | false {
  try {
    return endpoints().s3 ? false : 'the stack runs without --s3'
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

/** Floe's S3 storage on the stack's server, with the stack's IAM key; close it when done. */
export function stackS3(
  overrides: { accessKeyId?: string; secretAccessKey?: string; bucket?: string } = {},
): S3Storage {
  const s3 = s3Endpoints()
  return new S3Storage({
    bucket: s3.bucket,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    ...overrides,
  })
}

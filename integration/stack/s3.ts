// The local S3 server: moto's server mode (PyPI, in the stack's venv), on 127.0.0.1, in memory.
// Chosen over SeaweedFS in docs/decisions.md ("The local S3 server"). Ready means it created the
// warehouse bucket; then s3_users.py makes an IAM user with its access key and turns moto's
// signature checks on, so a wrong key or secret is refused as S3 refuses it.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { paths, type S3Endpoints, type StackOptions, stackSources } from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

export const s3Bucket = 'warehouse'
export const s3Region = 'us-east-1'

export async function startS3(
  options: StackOptions,
  dir: string,
): Promise<{ record: ServiceRecord; endpoints: Omit<S3Endpoints, 'rest'> }> {
  const p = paths(dir)
  const endpoint = `http://127.0.0.1:${options.ports.s3}`
  const record = startService(dir, {
    name: 's3',
    // The venv's python names the stack folder on the command line, so `down` knows the pid.
    command: p.python,
    args: ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(options.ports.s3)],
  })
  await waitReady(dir, record, () => bucketCreated(endpoint), 60_000)
  const output = execFileSync(p.python, [join(stackSources, 's3_users.py'), endpoint, s3Bucket], { encoding: 'utf8' })
  const key = JSON.parse(output) as Pick<S3Endpoints, 'accessKeyId' | 'secretAccessKey' | 'admin'>
  return {
    record,
    endpoints: { endpoint, region: s3Region, bucket: s3Bucket, warehouse: `s3://${s3Bucket}/warehouse`, ...key },
  }
}

/** Before authentication is on moto takes any signature; the probe's key signs nothing else. */
async function bucketCreated(endpoint: string): Promise<boolean> {
  const client = new S3Client({
    endpoint,
    region: s3Region,
    forcePathStyle: true,
    maxAttempts: 1,
    credentials: { accessKeyId: 'probe', secretAccessKey: 'probe' },
  })
  try {
    await client.send(new CreateBucketCommand({ Bucket: s3Bucket }), { abortSignal: AbortSignal.timeout(2000) })
    return true
  } finally {
    client.destroy()
  }
}

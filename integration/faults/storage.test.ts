// Object storage frozen while workers upload their WAL segments, then woken: uploads hang past
// their timeouts and are retried, rounds go on without the partitions that could not upload, and
// the data lands once storage answers again. First Azure Blob storage (Azurite), data files there;
// then the stack's S3 server with the SQL catalog's warehouse on it, so manifests and metadata
// files wait for S3 too, not only the data files. pyiceberg reads the tables back from there.
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet } from '../e2e/fleet.ts'
import { withoutS3 } from '../s3/support.ts'
import { assertExactlyOnce, badEvery, fastFleet, freeze, minute } from './support.ts'

/** Two workers; `service` frozen for 15 s while events go on arriving, then woken: each id once. */
async function freezeDuringUploads(t: Parameters<typeof freeze>[0], fleet: Fleet, service: string): Promise<void> {
  await Promise.all([fleet.start(), fleet.start()])
  await fleet.produce(1500, { badEvery })
  await fleet.nextCommit(3 * minute)
  const thaw = freeze(t, service)
  await fleet.produce(1500, { batch: 100, badEvery })
  await sleep(15_000)
  thaw()
  await fleet.produce(500, { badEvery })
  await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
}

describe('frozen object storage', () => {
  test('Azure storage frozen during uploads, then woken, loses and duplicates nothing', async (t) => {
    await freezeDuringUploads(t, await Fleet.create(t, { ...fastFleet, storage: 'azure' }), 'azurite')
  })

  // Both WAL layouts, whichever is the default: a shared segment holds every partition's rows of a
  // cut, so a round that outlives the outage must report them with their rotations or not at all.
  for (const walLayout of ['partition', 'shared'] as const) {
    test(`S3 frozen during uploads and commits, then woken, loses and duplicates nothing (${walLayout} WAL)`, {
      skip: withoutS3(),
    }, async (t) => {
      const fleet = await Fleet.create(t, { ...fastFleet, storage: 's3', catalog: 'sql', walLayout })
      await freezeDuringUploads(t, fleet, 's3')
    })
  }
})

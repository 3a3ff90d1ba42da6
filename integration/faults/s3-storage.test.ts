// The stack's S3 server frozen (SIGSTOP) while workers upload their WAL segments and commit, then
// woken (SIGCONT): requests hang until the server answers or their timeout passes and they are
// retried, rounds go on without the partitions that could not upload, and every id lands once.
// The table is wholly on S3 (the SQL catalog's warehouse there), so manifests and metadata files
// wait for S3 too, not only the data files.
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet } from '../e2e/fleet.ts'
import { withoutS3 } from '../s3/support.ts'
import { assertExactlyOnce, badEvery, fastFleet, freeze, minute } from './support.ts'

describe('frozen S3', { skip: withoutS3() }, () => {
  test('S3 frozen during uploads and commits, then woken, loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, { ...fastFleet, storage: 's3', catalog: 'sql' })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(1500, { badEvery })
    await fleet.nextCommit(3 * minute)
    const thaw = freeze(t, 's3')
    await fleet.produce(1500, { batch: 100, badEvery })
    await sleep(15_000)
    thaw()
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  })
})

// Azure Blob storage (Azurite) frozen while workers upload their WAL segments, then woken: uploads
// hang past their timeouts and are retried, rounds go on without the partitions that could not
// upload, and the data lands once storage answers again. Workers use storage type azure, so data
// files live on Azurite; pyiceberg reads them back from there.
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, fastFleet, freeze, minute } from './support.ts'

describe('frozen object storage', () => {
  test('Azure storage frozen during uploads, then woken, loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, { ...fastFleet, storage: 'azure' })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(1500, { badEvery })
    await fleet.nextCommit(3 * minute)
    const thaw = freeze(t, 'azurite')
    await fleet.produce(1500, { batch: 100, badEvery })
    await sleep(15_000)
    thaw()
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  })
})

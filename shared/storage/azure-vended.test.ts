import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { RoutedStorage } from './routing.ts'

const location = 'abfs://warehouse@devstoreaccount1.dfs.core.windows.net/ns/t/data/x.parquet'

describe('Azure storage with vended credentials', () => {
  test('an account with no SAS vended and no connection string is STORAGE_UNAVAILABLE, naming the account', async () => {
    const storage = new RoutedStorage({})
    await assert.rejects(storage.exists(location), (error) => {
      assert.ok(isFloeError(error, 'STORAGE_UNAVAILABLE'))
      assert.match(error.message, /^no credentials for Azure account devstoreaccount1: /)
      return true
    })
    // Another account's SAS does not open this one.
    storage.useVendedCredentials({ 'adls.sas-token.other.dfs.core.windows.net': 'sv=1&sig=x' })
    await assert.rejects(storage.exists(location), (error) => isFloeError(error, 'STORAGE_UNAVAILABLE'))
  })

  test("the account's SAS is used from then on, by Iceberg's key with the account's name or host", async () => {
    for (const key of ['adls.sas-token.devstoreaccount1', 'adls.sas-token.devstoreaccount1.dfs.core.windows.net']) {
      // Nothing listens on port 1: the request is made (with the SAS), then refused, not "no credentials".
      const storage = new RoutedStorage({ azure: { blobEndpoint: 'http://127.0.0.1:1/devstoreaccount1' } })
      storage.useVendedCredentials({ [key]: 'sv=2024-01-01&sig=abc' })
      const refused = new RoutedStorage({})
      refused.useVendedCredentials({
        [key]: 'sv=2024-01-01&sig=abc',
        [key.replace('sas-token', 'connection-string')]: 'http://127.0.0.1:1/devstoreaccount1',
      })
      for (const s of [storage, refused]) {
        await assert.rejects(s.exists(location), (error) => {
          assert.ok(isFloeError(error, 'STORAGE_UNAVAILABLE'))
          assert.match(error.message, /^Azure exists failed for /)
          assert.doesNotMatch(error.message, /sig=abc/)
          return true
        })
      }
    }
  })
})

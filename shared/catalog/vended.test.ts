import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LoadedTable } from './catalog.ts'
import { vendedCredentialsOf } from './catalog.ts'

test("a table's vended credentials: its config under the storage-credentials entry of the longest matching prefix", () => {
  const table = {
    metadata: { location: 'abfs://c@a.dfs.core.windows.net/ns/t' },
    metadataLocation: 'x',
    config: { 'adls.sas-token.a': 'from-config', other: 'kept' },
    storageCredentials: [
      { prefix: 'abfs://c@a.dfs.core.windows.net/', config: { 'adls.sas-token.a': 'container' } },
      { prefix: 'abfs://c@a.dfs.core.windows.net/ns/', config: { 'adls.sas-token.a': 'namespace' } },
      { prefix: 'abfs://d@a.dfs.core.windows.net/', config: { 'adls.sas-token.a': 'another container' } },
    ],
  } as unknown as LoadedTable
  assert.deepEqual(vendedCredentialsOf(table), { 'adls.sas-token.a': 'namespace', other: 'kept' })
  assert.deepEqual(vendedCredentialsOf({ ...table, storageCredentials: [] }), table.config)
})

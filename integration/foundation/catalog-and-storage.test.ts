// The Iceberg REST catalog server and Azurite are the real servers, and pyiceberg reads what the
// REST catalog holds. These talk to the servers over plain HTTP and the Azure SDK, without Floe's
// own catalog client, so they prove the stack rather than Floe.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BlobServiceClient } from '@azure/storage-blob'
import { endpoints, uniqueName, verifyTable } from '../harness.ts'

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${endpoints().rest.uri}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.text()
  return { status: response.status, json: text ? JSON.parse(text) : undefined }
}

describe('the local Iceberg REST catalog', () => {
  test('creates a namespace and a partitioned table that pyiceberg then loads', async () => {
    const namespace = uniqueName('it_ns')
    assert.equal((await rest('POST', '/v1/namespaces', { namespace: [namespace] })).status, 200)
    const created = await rest('POST', `/v1/namespaces/${namespace}/tables`, {
      name: 'events',
      schema: {
        type: 'struct',
        'schema-id': 0,
        fields: [
          { id: 1, name: 'id', required: true, type: 'string' },
          { id: 2, name: 'ts', required: false, type: 'timestamptz' },
          { id: 3, name: 'amount', required: false, type: 'double' },
        ],
      },
      'partition-spec': {
        'spec-id': 0,
        fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' }],
      },
      'write-order': { 'order-id': 0, fields: [] },
      properties: { 'format-version': '2' },
    })
    assert.equal(created.status, 200, JSON.stringify(created.json))
    const metadata = (created.json as { metadata: { 'format-version': number; location: string } }).metadata
    assert.equal(metadata['format-version'], 2)
    assert.ok(metadata.location.startsWith(endpoints().rest.warehouse))

    const report = await verifyTable(`${namespace}.events`)
    assert.equal(report.error, undefined)
    assert.equal(report.rows, 0)
    assert.match(report.schema, /1: id: required string/)
    assert.match(report.spec, /day\(2\)|ts_day/)
  })

  test('answers 404 for a table that does not exist', async () => {
    assert.equal((await rest('GET', `/v1/namespaces/${uniqueName('it_none')}/tables/nothing`)).status, 404)
  })
})

describe('the local Azurite blob service', () => {
  test('writes, overwrites, reads, lists and deletes a blob', async () => {
    const { connectionString, container } = endpoints().azurite
    const blobs = BlobServiceClient.fromConnectionString(connectionString).getContainerClient(container)
    const prefix = uniqueName('it-blob')
    const blob = blobs.getBlockBlobClient(`${prefix}/data.bin`)
    await blob.uploadData(Buffer.from('first'))
    await blob.uploadData(Buffer.from('second version'))
    assert.equal((await blob.downloadToBuffer()).toString(), 'second version')
    const names: string[] = []
    for await (const item of blobs.listBlobsFlat({ prefix })) names.push(item.name)
    assert.deepEqual(names, [`${prefix}/data.bin`])
    await blob.delete()
    assert.equal(await blob.exists(), false)
  })
})

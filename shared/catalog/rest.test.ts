// The REST client against a small scripted HTTP server on loopback: what the client sends, and
// how it classifies every way a catalog can answer or fail. The live Iceberg REST catalog is
// exercised in integration/catalog/.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, test } from 'node:test'
import { type ErrorCode, isFloeError } from '../errors.ts'
import { parseTableMetadata, serializeTableMetadata } from '../iceberg/metadata/index.ts'
import { RestCatalog } from './index.ts'

const metadata = parseTableMetadata(`{"format-version":2,"table-uuid":"6913e04e-5f46-4f6c-a287-aaf54185c92f",
  "location":"file:///w/ns/t","last-sequence-number":1,"last-updated-ms":1,"last-column-id":1,
  "current-schema-id":0,"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"a","required":false,"type":"long"}]}],
  "default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[]}],"last-partition-id":999,"default-sort-order-id":0,
  "sort-orders":[{"order-id":0,"fields":[]}],"properties":{},"current-snapshot-id":3051729675574597004,
  "refs":{"main":{"snapshot-id":3051729675574597004,"type":"branch"}},
  "snapshots":[{"snapshot-id":3051729675574597004,"sequence-number":1,"timestamp-ms":1,"manifest-list":"file:///w/m.avro","summary":{"operation":"append"}}],
  "snapshot-log":[],"metadata-log":[]}`)
const loadResult = `{"metadata-location":"file:/w/ns/t/metadata/00001-x.metadata.json","metadata":${serializeTableMetadata(metadata)},"config":{"k":"v"}}`

type Reply = { status: number; body?: string } | 'hang' | 'reset'
interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

let server: Server
let uri: string
let routes: Map<string, Reply>
let seen: Seen[]

function reply(request: IncomingMessage, response: ServerResponse, body: string): void {
  seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body })
  const key = `${request.method} ${(request.url ?? '').split('?')[0]}`
  const answer = routes.get(key) ?? {
    status: 404,
    body: '{"error":{"message":"no route","type":"NoSuchTableException","code":404}}',
  }
  if (answer === 'hang') return
  if (answer === 'reset') {
    request.socket.destroy()
    return
  }
  response.writeHead(answer.status, { 'content-type': 'application/json' })
  response.end(answer.body ?? '')
}

before(async () => {
  server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => {
      body += chunk
    })
    request.on('end', () => reply(request, response, body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/catalog`
})
after(() => {
  server.closeAllConnections()
  server.close()
})
beforeEach(() => {
  seen = []
  routes = new Map([
    [
      'GET /api/catalog/v1/config',
      { status: 200, body: '{"defaults":{"a":"default","b":"default"},"overrides":{"prefix":"ws1","b":"override"}}' },
    ],
  ])
})

async function openCatalog(options: { requestTimeoutMs?: number } = {}) {
  return RestCatalog.open({
    uri,
    token: 'secret',
    warehouse: 'wh',
    properties: { a: 'client', b: 'client' },
    ...options,
  })
}

describe('the REST catalog client', () => {
  test('reads /v1/config first and merges defaults, client properties and overrides', async () => {
    const catalog = await openCatalog()
    try {
      assert.equal(seen[0]?.url, '/api/catalog/v1/config?warehouse=wh')
      assert.equal(seen[0]?.headers.authorization, 'Bearer secret')
      assert.deepEqual(catalog.properties, { a: 'client', b: 'override', prefix: 'ws1', warehouse: 'wh' })
    } finally {
      await catalog.close()
    }
  })

  test('puts the prefix in every path and joins namespace levels with %1F', async () => {
    routes.set('GET /api/catalog/v1/ws1/namespaces/a%1Fb%20c/tables/t', { status: 200, body: loadResult })
    const catalog = await openCatalog()
    try {
      const loaded = await catalog.loadTable({ namespace: ['a', 'b c'], name: 't' })
      assert.equal(loaded.metadata['current-snapshot-id'], 3051729675574597004n)
      assert.equal(loaded.metadataLocation, 'file:/w/ns/t/metadata/00001-x.metadata.json')
      assert.deepEqual(loaded.config, { k: 'v' })
    } finally {
      await catalog.close()
    }
  })

  test('sends 63-bit ids in a commit as exact JSON integers', async () => {
    routes.set('POST /api/catalog/v1/ws1/namespaces/ns/tables/t', { status: 200, body: loadResult })
    const catalog = await openCatalog()
    try {
      const committed = await catalog.commitTable(
        { namespace: ['ns'], name: 't' },
        [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
        [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 3051729675574597004n }],
      )
      assert.equal(committed.metadata.snapshots[0]?.['snapshot-id'], 3051729675574597004n)
      const body = seen.at(-1)?.body ?? ''
      assert.match(body, /"snapshot-id":3051729675574597004[,}]/)
      assert.match(body, /"snapshot-id":null/)
      assert.match(body, /"identifier":\{"namespace":\["ns"\],"name":"t"\}/)
    } finally {
      await catalog.close()
    }
  })

  const commitAnswers: { name: string; reply: Reply; code: ErrorCode }[] = [
    {
      name: '409',
      reply: { status: 409, body: '{"error":{"message":"x","type":"CommitFailedException","code":409}}' },
      code: 'COMMIT_CONFLICT',
    },
    {
      name: '500',
      reply: { status: 500, body: '{"error":{"message":"x","type":"CommitStateUnknownException","code":500}}' },
      code: 'COMMIT_STATE_UNKNOWN',
    },
    {
      name: '502 with an HTML page',
      reply: { status: 502, body: '<html>bad gateway</html>' },
      code: 'COMMIT_STATE_UNKNOWN',
    },
    { name: '503', reply: { status: 503 }, code: 'COMMIT_STATE_UNKNOWN' },
    { name: '504', reply: { status: 504 }, code: 'COMMIT_STATE_UNKNOWN' },
    {
      name: '400',
      reply: { status: 400, body: '{"error":{"message":"x","type":"BadRequestException","code":400}}' },
      code: 'CATALOG_BAD_REQUEST',
    },
    { name: '401', reply: { status: 401 }, code: 'CATALOG_AUTHENTICATION_FAILED' },
    { name: '404', reply: { status: 404 }, code: 'CATALOG_NOT_FOUND' },
    { name: '200 that is not JSON', reply: { status: 200, body: 'ok' }, code: 'COMMIT_STATE_UNKNOWN' },
    {
      name: '200 without metadata',
      reply: { status: 200, body: '{"metadata-location":"x"}' },
      code: 'COMMIT_STATE_UNKNOWN',
    },
    { name: 'a connection reset after the request arrived', reply: 'reset', code: 'COMMIT_STATE_UNKNOWN' },
    { name: 'no answer within the request timeout', reply: 'hang', code: 'COMMIT_STATE_UNKNOWN' },
  ]
  for (const { name, reply: answer, code } of commitAnswers) {
    test(`classifies a commit answered by ${name} as ${code}`, async () => {
      routes.set('POST /api/catalog/v1/ws1/namespaces/ns/tables/t', answer)
      const catalog = await openCatalog({ requestTimeoutMs: 300 })
      try {
        await assert.rejects(catalog.commitTable({ namespace: ['ns'], name: 't' }, [], []), (e) => isFloeError(e, code))
      } finally {
        await catalog.close()
      }
    })
  }

  const readAnswers: { name: string; reply: Reply; code: ErrorCode }[] = [
    { name: '503', reply: { status: 503 }, code: 'CATALOG_UNAVAILABLE' },
    { name: '500', reply: { status: 500 }, code: 'CATALOG_UNAVAILABLE' },
    { name: '419', reply: { status: 419 }, code: 'CATALOG_UNAVAILABLE' },
    { name: '404', reply: { status: 404 }, code: 'CATALOG_NOT_FOUND' },
    { name: '403', reply: { status: 403 }, code: 'CATALOG_BAD_REQUEST' },
    { name: 'a connection reset', reply: 'reset', code: 'CATALOG_UNAVAILABLE' },
  ]
  for (const { name, reply: answer, code } of readAnswers) {
    test(`classifies a load answered by ${name} as ${code}`, async () => {
      routes.set('GET /api/catalog/v1/ws1/namespaces/ns/tables/t', answer)
      const catalog = await openCatalog({ requestTimeoutMs: 300 })
      try {
        await assert.rejects(catalog.loadTable({ namespace: ['ns'], name: 't' }), (e) => isFloeError(e, code))
      } finally {
        await catalog.close()
      }
    })
  }

  test('says CATALOG_UNAVAILABLE, safe to retry, when the catalog refuses the connection', async () => {
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    const port = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
    await assert.rejects(RestCatalog.open({ uri: `http://127.0.0.1:${port}` }), (e) => {
      assert.ok(isFloeError(e, 'CATALOG_UNAVAILABLE'))
      assert.equal(e.details.transport, 'ECONNREFUSED')
      return true
    })
  })

  test('treats 409 on namespace creation as already there', async () => {
    routes.set('POST /api/catalog/v1/ws1/namespaces', { status: 409 })
    const catalog = await openCatalog()
    try {
      await catalog.createNamespace(['ns'])
      assert.deepEqual(JSON.parse(seen.at(-1)?.body ?? ''), { namespace: ['ns'], properties: {} })
    } finally {
      await catalog.close()
    }
  })

  test('loads the table when create answers 409 and ifExists is load, and refuses otherwise', async () => {
    routes.set('POST /api/catalog/v1/ws1/namespaces/ns/tables', { status: 409 })
    routes.set('GET /api/catalog/v1/ws1/namespaces/ns/tables/t', { status: 200, body: loadResult })
    const catalog = await openCatalog()
    const schema = metadata.schemas[0]!
    try {
      const loaded = await catalog.createTable(
        { namespace: ['ns'], name: 't' },
        schema,
        { fields: [] },
        { ifExists: 'load' },
      )
      assert.equal(loaded.metadata['table-uuid'], metadata['table-uuid'])
      await assert.rejects(catalog.createTable({ namespace: ['ns'], name: 't' }, schema, { fields: [] }), (e) =>
        isFloeError(e, 'CATALOG_ALREADY_EXISTS'),
      )
      const sent = JSON.parse(seen.find((s) => s.method === 'POST')?.body ?? '')
      assert.deepEqual(sent['partition-spec'], { 'spec-id': 0, fields: [] })
      assert.equal(sent.properties['format-version'], '2')
    } finally {
      await catalog.close()
    }
  })

  test('checks existence with GET when the server lists no HEAD endpoint, and with HEAD when it does', async () => {
    routes.set('GET /api/catalog/v1/ws1/namespaces/ns', { status: 200, body: '{"namespace":["ns"]}' })
    const catalog = await openCatalog()
    try {
      assert.equal(await catalog.namespaceExists(['ns']), true)
      assert.equal(await catalog.namespaceExists(['other']), false)
      assert.equal(seen.at(-1)?.method, 'GET')
    } finally {
      await catalog.close()
    }
    routes.set('GET /api/catalog/v1/config', {
      status: 200,
      body: '{"defaults":{},"overrides":{},"endpoints":["HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}',
    })
    routes.set('HEAD /api/catalog/v1/namespaces/ns/tables/t', { status: 204 })
    const headCatalog = await openCatalog()
    try {
      assert.equal(await headCatalog.tableExists({ namespace: ['ns'], name: 't' }), true)
      assert.equal(seen.at(-1)?.method, 'HEAD')
    } finally {
      await headCatalog.close()
    }
  })
})

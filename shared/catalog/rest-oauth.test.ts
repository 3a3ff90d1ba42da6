import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { RestCatalog } from './rest.ts'
import { RestTokenSource } from './rest-oauth.ts'

interface Asked {
  method: string
  url: string
  authorization: string | undefined
  body: string
}

type Handler = (asked: Asked, all: Asked[]) => [number, unknown]

/** A server answering by `handler`, recording every request. */
async function server(t: { after: (fn: () => unknown) => void }, handler: Handler) {
  const asked: Asked[] = []
  const http = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let body = ''
    for await (const chunk of request) body += chunk
    const entry = {
      method: request.method ?? '',
      url: request.url ?? '',
      authorization: request.headers.authorization,
      body,
    }
    asked.push(entry)
    const [status, answer] = handler(entry, asked)
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    http.closeAllConnections()
    http.close()
  })
  return { uri: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, asked }
}

const tokens = (asked: Asked[]) => asked.filter((a) => a.url.endsWith('/oauth/tokens')).length

describe('the REST catalog token source', () => {
  test('asks by client credentials in the form, and keeps the token until 80 % of expires_in (fake clock)', async (t) => {
    const endpoint = await server(t, (_, all) => [200, { access_token: `token-${tokens(all)}`, expires_in: 10 }])
    let now = 1_000_000
    const source = new RestTokenSource({
      serverUri: `${endpoint.uri}/v1/oauth/tokens`,
      credential: 'floe:s3cr:et',
      scope: 'catalog',
      now: () => now,
    })
    assert.equal(await source.token(), 'token-1')
    assert.deepEqual(Object.fromEntries(new URLSearchParams(endpoint.asked[0]?.body)), {
      grant_type: 'client_credentials',
      client_id: 'floe',
      client_secret: 's3cr:et',
      scope: 'catalog',
    })
    now += 7_999
    assert.equal(await source.token(), 'token-1')
    now += 2
    assert.equal(await source.token(), 'token-2')
    now += 7_999
    assert.equal(await source.token(), 'token-2')
    assert.equal(endpoint.asked.length, 2)
  })

  test('requests that need a token at once share one fetch; a refused token is replaced once', async (t) => {
    const endpoint = await server(t, (_, all) => [200, { access_token: `token-${tokens(all)}`, expires_in: 3600 }])
    const source = new RestTokenSource({
      serverUri: `${endpoint.uri}/v1/oauth/tokens`,
      credential: 'secret-only',
      scope: 'catalog',
    })
    assert.deepEqual(await Promise.all([source.token(), source.token()]), ['token-1', 'token-1'])
    assert.equal(new URLSearchParams(endpoint.asked[0]?.body).get('client_id'), null)
    // Two requests refused with token-1 at once: one new token for both.
    assert.deepEqual(await Promise.all([source.refresh('token-1'), source.refresh('token-1')]), ['token-2', 'token-2'])
    assert.equal(await source.refresh('token-1'), 'token-2', 'token-1 is already replaced')
    assert.equal(endpoint.asked.length, 2)
  })

  test('a refused credential is CATALOG_AUTHENTICATION_FAILED naming the endpoint and the OAuth error, never the secret', async (t) => {
    const endpoint = await server(t, () => [401, { error: 'invalid_client', error_description: 'bad s3cret' }])
    const serverUri = `${endpoint.uri}/v1/oauth/tokens`
    const source = new RestTokenSource({ serverUri, credential: 'floe:s3cret', scope: 'catalog' })
    await assert.rejects(source.token(), (error) => {
      assert.ok(isFloeError(error))
      assert.equal(error.code, 'CATALOG_AUTHENTICATION_FAILED')
      assert.equal(error.fatal, true)
      assert.equal(error.message, `token endpoint ${serverUri} refused the credential: 401 invalid_client`)
      assert.doesNotMatch(JSON.stringify({ m: error.message, d: error.details }), /s3cret/)
      return true
    })
  })

  test('an endpoint that does not answer is CATALOG_UNAVAILABLE (retryable)', async () => {
    const source = new RestTokenSource({
      serverUri: 'http://127.0.0.1:1/v1/oauth/tokens',
      credential: 'floe:x',
      scope: 'catalog',
    })
    await assert.rejects(source.token(), (error) => isFloeError(error) && error.code === 'CATALOG_UNAVAILABLE')
  })
})

describe('the REST catalog client with OAuth 2', () => {
  const table = {
    'metadata-location': 'file:/w/t/metadata/1.json',
    metadata: {
      'format-version': 2,
      'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
      location: 'file:/w/t',
      'last-sequence-number': 0,
      'last-updated-ms': 1,
      'last-column-id': 1,
      'current-schema-id': 0,
      schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'string' }] }],
      'default-spec-id': 0,
      'partition-specs': [{ 'spec-id': 0, fields: [] }],
      'last-partition-id': 999,
      'default-sort-order-id': 0,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
    },
  }

  test('fetches a token from <uri>/v1/oauth/tokens before /v1/config, and retries a 401 and a 419 once with a new one', async (t) => {
    let refuse = 0
    const catalog = await server(t, (asked, all) => {
      if (asked.url === '/v1/oauth/tokens') return [200, { access_token: `token-${tokens(all)}`, expires_in: 3600 }]
      if (asked.url.startsWith('/v1/config')) return [200, { defaults: {}, overrides: {} }]
      if (refuse > 0 && asked.authorization === 'Bearer token-1') {
        refuse--
        return [refuse === 0 ? 419 : 401, { error: { message: 'expired', type: 'NotAuthorizedException', code: 419 } }]
      }
      return [200, table]
    })
    const client = await RestCatalog.open({ uri: catalog.uri, credential: 'floe:s3cret' })
    t.after(() => client.close())
    assert.deepEqual(
      catalog.asked.map((a) => `${a.method} ${a.url} ${a.authorization ?? '-'}`),
      ['POST /v1/oauth/tokens -', 'GET /v1/config Bearer token-1'],
    )
    assert.equal(new URLSearchParams(catalog.asked[0]?.body).get('scope'), 'catalog')
    refuse = 1
    await client.loadTable({ namespace: ['ns'], name: 't' })
    assert.deepEqual(
      catalog.asked.slice(2).map((a) => `${a.method} ${a.url} ${a.authorization ?? '-'}`),
      [
        'GET /v1/namespaces/ns/tables/t Bearer token-1',
        'POST /v1/oauth/tokens -',
        'GET /v1/namespaces/ns/tables/t Bearer token-2',
      ],
    )
  })

  test('a token refused twice is not tried a third time: CATALOG_AUTHENTICATION_FAILED', async (t) => {
    const catalog = await server(t, (asked, all) => {
      if (asked.url === '/auth/token') return [200, { access_token: `token-${tokens(all)}`, expires_in: 3600 }]
      if (asked.url.startsWith('/v1/config')) return [200, {}]
      return [401, { error: { message: 'no', type: 'NotAuthorizedException', code: 401 } }]
    })
    const client = await RestCatalog.open({
      uri: catalog.uri,
      credential: 'floe:s3cret',
      oauth2ServerUri: `${catalog.uri}/auth/token`,
      scope: 'PRINCIPAL_ROLE:ALL',
    })
    t.after(() => client.close())
    assert.equal(new URLSearchParams(catalog.asked[0]?.body).get('scope'), 'PRINCIPAL_ROLE:ALL')
    await assert.rejects(
      client.loadTable({ namespace: ['ns'], name: 't' }),
      (error) => isFloeError(error) && error.code === 'CATALOG_AUTHENTICATION_FAILED',
    )
    assert.equal(catalog.asked.filter((a) => a.url.includes('/tables/')).length, 2)
  })

  test('a refused credential fails open() with the token endpoint named', async (t) => {
    const catalog = await server(t, () => [400, { error: 'invalid_client' }])
    await assert.rejects(
      RestCatalog.open({ uri: catalog.uri, credential: 'floe:wrong' }),
      new RegExp(
        `^FloeError: token endpoint ${catalog.uri}/v1/oauth/tokens refused the credential: 400 invalid_client$`,
      ),
    )
  })
})

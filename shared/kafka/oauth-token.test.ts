import assert from 'node:assert/strict'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { OAuthTokenSource } from './oauth-token.ts'

interface Asked {
  authorization: string | undefined
  body: string
}

/** A token endpoint that answers each request with the next of `answers` and records what it was asked. */
async function tokenEndpoint(t: { after: (fn: () => unknown) => void }, answers: [number, object][]) {
  const asked: Asked[] = []
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = ''
    for await (const chunk of request) body += chunk
    asked.push({ authorization: request.headers.authorization, body })
    const [status, answer] = answers[Math.min(asked.length - 1, answers.length - 1)] ?? [500, {}]
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, asked }
}

describe('the OAUTHBEARER token source', () => {
  test('asks by client credentials with HTTP Basic and the scope, and keeps the token until 80 % of its life', async (t) => {
    const endpoint = await tokenEndpoint(t, [
      [200, { access_token: 'first', expires_in: 100, token_type: 'bearer' }],
      [200, { access_token: 'second', expires_in: 100 }],
    ])
    let now = 1_000_000
    const source = new OAuthTokenSource(
      { tokenEndpointUrl: endpoint.url, clientId: 'floe', clientSecret: 's3cret', scope: 'kafka' },
      { now: () => now },
    )
    assert.equal(await source.token(), 'first')
    assert.equal(endpoint.asked[0]?.authorization, `Basic ${Buffer.from('floe:s3cret').toString('base64')}`)
    assert.deepEqual(Object.fromEntries(new URLSearchParams(endpoint.asked[0]?.body)), {
      grant_type: 'client_credentials',
      scope: 'kafka',
    })
    now += 79_000
    assert.equal(await source.token(), 'first')
    now += 2000
    assert.equal(await source.token(), 'second')
    assert.equal(endpoint.asked.length, 2)
  })

  test('connections that need a token at once share one request', async (t) => {
    const endpoint = await tokenEndpoint(t, [[200, { access_token: 'shared', expires_in: 3600 }]])
    const source = new OAuthTokenSource({ tokenEndpointUrl: endpoint.url, clientId: 'floe', clientSecret: 'x' })
    assert.deepEqual(await Promise.all([source.token(), source.token(), source.token()]), [
      'shared',
      'shared',
      'shared',
    ])
    assert.equal(endpoint.asked.length, 1)
  })

  test('a refused client is an authentication failure that names the endpoint, not the secret', async (t) => {
    const endpoint = await tokenEndpoint(t, [[401, { error: 'invalid_client' }]])
    const source = new OAuthTokenSource({ tokenEndpointUrl: endpoint.url, clientId: 'floe', clientSecret: 'hunter2' })
    await assert.rejects(source.token(), (error: unknown) => {
      assert.ok(isFloeError(error, 'KAFKA_AUTHENTICATION_FAILED'))
      assert.equal(error.message, `token endpoint ${endpoint.url} answered 401`)
      return true
    })
  })

  test('an endpoint in trouble or not there is unavailable, to be tried again', async (t) => {
    const failing = await tokenEndpoint(t, [[503, {}]])
    const source = new OAuthTokenSource({ tokenEndpointUrl: failing.url, clientId: 'floe', clientSecret: 'x' })
    await assert.rejects(source.token(), (error: unknown) => isFloeError(error, 'KAFKA_UNAVAILABLE'))
    const absent = new OAuthTokenSource({
      tokenEndpointUrl: 'http://127.0.0.1:1/token',
      clientId: 'f',
      clientSecret: 'x',
    })
    await assert.rejects(absent.token(), (error: unknown) => isFloeError(error, 'KAFKA_UNAVAILABLE'))
  })
})

// The REST catalog behind OAuth 2 on the real stack (`stack up --rest-auth`: the auth front of
// integration/stack/rest-auth.ts before the real catalog, tokens that expire every few seconds):
// a fleet of `floe run` workers renews its tokens through many rounds and commits every id once;
// a wrong credential is named by `floe validate` and stops `floe run` with one line; a dataset
// whose Azure credentials come only from the catalog (vended SAS) writes to Azurite and commits.
// And no secret — the client secret, a token or SAS the front issued, the Azurite key, the Kafka
// password and key — appears in a worker's log, its /metrics or a command's output.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { endpoints } from '../harness.ts'
import { sasRenewSeconds } from '../stack/rest-auth.ts'
import { assertEveryIdOnce, Fleet, type WorkerProcess } from './fleet.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')
const minute = 60_000

function withoutRestAuth(): string | false {
  try {
    return endpoints().restAuth ? false : 'the stack runs without --rest-auth'
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

const auth = () => endpoints().restAuth!

/** The environment that sends a worker through the auth front with the stack's client. */
function oauthEnv(credential = `${auth().clientId}:${auth().clientSecret}`): NodeJS.ProcessEnv {
  return { FLOE_CATALOG__URI: auth().uri, FLOE_CATALOG__CREDENTIAL: credential }
}

/** Every token and SAS the front issued so far. */
async function issued(): Promise<{ tokens: string[]; sas: string[]; unprefixed: string[] }> {
  return (await (await fetch(auth().issued)).json()) as { tokens: string[]; sas: string[]; unprefixed: string[] }
}

/** The secrets of this run: each SAS whole and its signature alone (the part that grants). */
async function secretsOf(fleet: Fleet): Promise<string[]> {
  const { tokens, sas } = await issued()
  const signatures = sas.map((s) => new URLSearchParams(s).get('sig') ?? s)
  return [
    auth().clientSecret,
    ...tokens,
    ...sas,
    ...signatures,
    ...signatures.map(encodeURIComponent),
    endpoints().azurite.accountKey,
    ...fleet.secrets,
  ]
}

/** The raw /metrics text of a running worker. */
async function metricsText(worker: WorkerProcess): Promise<string> {
  const started = worker
    .lines()
    .filter((l) => l.msg === 'worker started')
    .at(-1)
  assert.ok(started, `worker ${worker.id} has not started`)
  return (await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`)).text()
}

/** Where each secret shows up: `<worker> log`, `<worker> /metrics`; none is the only good answer. */
async function leaks(fleet: Fleet, secrets: string[]): Promise<string[]> {
  const found: string[] = []
  for (const worker of fleet.workers) {
    const log = readFileSync(worker.logFile, 'utf8')
    const metrics = worker.running ? await metricsText(worker) : ''
    for (const [i, secret] of secrets.entries()) {
      if (log.includes(secret)) found.push(`${worker.id} log holds secret #${i}`)
      if (metrics.includes(secret)) found.push(`${worker.id} /metrics holds secret #${i}`)
    }
  }
  return found
}

async function floeCommand(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(floe, args, {
      env: { ...process.env, FLOE_METRICS__PORT: '0', ...env },
      timeout: 2 * minute,
    })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

const rounds = (fleet: Fleet) =>
  fleet.workers.reduce((n, w) => n + w.lines().filter((l) => l.msg === 'round committed').length, 0)

describe('the REST catalog behind OAuth 2', { skip: withoutRestAuth(), concurrency: false }, () => {
  test('three workers renew their short-lived tokens through many rounds and land every id once, leaking no secret', async (t) => {
    const kafka = endpoints().kafka.secure ? 'sasl_ssl' : 'plaintext'
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 2, kafka, env: oauthEnv() })
    const tokensBefore = (await issued()).tokens.length
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.waitFor(() => fleet.workers.every((w) => w.logged('worker started')), 2 * minute, 'three workers')
    // Bursts over several token lifetimes: rounds commit with tokens renewed, and some refused.
    for (let burst = 0; burst < 10; burst++) {
      await fleet.produce(1000)
      await sleep(auth().tokenSeconds * 1000 + 1000)
    }
    const report = await fleet.waitSettled(4 * minute)
    assertEveryIdOnce(fleet, report)
    assert.ok(rounds(fleet) >= 8, `rounds committed: ${rounds(fleet)}`)
    const renewed = (await issued()).tokens.length - tokensBefore
    assert.ok(renewed >= 3 * 8, `tokens issued to the fleet: ${renewed}`)
    assert.ok(
      fleet.workers.every((w) => w.running && !w.logged('fatal error: stopping')),
      'every worker still runs',
    )
    assert.deepEqual(await leaks(fleet, await secretsOf(fleet)), [])
    // The front's /v1/config gives a prefix: every call about the fleet's table carried it.
    const namespace = fleet.table.split('.')[0] ?? ''
    assert.deepEqual(
      (await issued()).unprefixed.filter((path) => path.includes(namespace)),
      [],
    )
  })

  test('a wrong credential: validate names the token endpoint, run stops with one line', async (t) => {
    const fleet = await Fleet.create(t, { env: oauthEnv() })
    const wrong = oauthEnv('floe:not-the-secret')
    const validated = await floeCommand(['validate', '--config', fleet.config], wrong)
    assert.equal(validated.code, 1, validated.out)
    const endpoint = auth().tokenEndpoint.replaceAll('.', '\\.')
    const uri = auth().uri.replaceAll('.', '\\.')
    assert.match(
      validated.out,
      new RegExp(`^FAIL catalog ${uri}: token endpoint ${endpoint} refused the credential: 401 invalid_client$`, 'm'),
    )
    assert.doesNotMatch(validated.out, /not-the-secret|\n\s+at /)

    const right = await floeCommand(['validate', '--config', fleet.config], oauthEnv())
    assert.match(
      right.out,
      new RegExp(`^ok {3}catalog ${uri}: reachable \\(rest ${uri}, OAuth 2 token from ${endpoint}\\)$`, 'm'),
    )

    const ran = await floeCommand(['run', '--config', fleet.config], {
      ...wrong,
      FLOE_INGESTION__WAL__DIR: join(fleet.dir, 'wal-wrong'),
    })
    assert.equal(ran.code, 1, ran.out)
    const stderr = ran.out.split('\n').filter((l) => l.startsWith('floe run:'))
    assert.deepEqual(stderr, [
      `floe run: catalog ${auth().uri}: token endpoint ${auth().tokenEndpoint} refused the credential: 401 invalid_client`,
    ])
    assert.doesNotMatch(ran.out, /not-the-secret|\n\s+at /)
    const secrets = await secretsOf(fleet)
    for (const [name, out] of Object.entries({ validated, right, ran }))
      assert.ok(!secrets.some((secret) => out.out.includes(secret)), `the output of ${name} holds a secret`)
  })

  test('a dataset whose Azure credentials are only vended by the catalog writes to Azurite and commits', async (t) => {
    const fleet = await Fleet.create(t, {
      storage: 'azure',
      commitIntervalSeconds: 2,
      env: {
        ...oauthEnv(),
        FLOE_CATALOG__ACCESS_DELEGATION: 'vended-credentials',
        // No Azure key anywhere: the SAS (and the endpoint) come with the table.
        FLOE_STORAGE__AZURE__CONNECTION_STRING: undefined,
      },
    })
    const sasBefore = (await issued()).sas.length
    const validated = await floeCommand(['validate', '--config', fleet.config], {
      ...oauthEnv(),
      FLOE_CATALOG__ACCESS_DELEGATION: 'vended-credentials',
    })
    assert.equal(validated.code, 0, validated.out)
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(1000)
    await fleet.waitSettled(4 * minute)
    // The front makes a new SAS once its last is sasRenewSeconds old. Past that, the next round's
    // table load must take up a new one, and the second half lands with it.
    const sasSettled = (await issued()).sas.length
    await sleep((sasRenewSeconds + 1) * 1000)
    await fleet.produce(1000)
    assertEveryIdOnce(fleet, await fleet.waitSettled(4 * minute))
    const sas = (await issued()).sas.length
    assert.ok(sas > sasBefore, 'no SAS vended to the fleet')
    assert.ok(sas > sasSettled, `no SAS vended after the first renewal time: ${sas - sasBefore} in all`)
    const worker = fleet.workers[0]!
    assert.ok(!worker.lines().some((l) => JSON.stringify(l).includes('AccountKey')))
    assert.deepEqual(await leaks(fleet, await secretsOf(fleet)), [])
  })
})

import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parseConfig, redact } from './load.ts'
import { refusal, restAndOneDataset } from './test-support.ts'

const base = `kafka:
  brokers: [127.0.0.1:9092]
${restAndOneDataset}`

const catalogWith = (lines: string) =>
  base.replace('  uri: http://127.0.0.1:8181\n', `  uri: http://127.0.0.1:8181\n${lines}`)
const rest = (config: ReturnType<typeof parseConfig>) => {
  assert.equal(config.catalog.type, 'rest')
  return config.catalog as Extract<typeof config.catalog, { type: 'rest' }>
}

describe("the catalog's OAuth 2 and vended-credential keys", () => {
  test('the credential comes from FLOE_CATALOG__CREDENTIAL; scope defaults to catalog; nothing secret is printed', () => {
    const config = parseConfig(base, 'floe.yaml', { FLOE_CATALOG__CREDENTIAL: 'floe:s3cret' })
    assert.equal(rest(config).credential, 'floe:s3cret')
    assert.equal(rest(config).scope, 'catalog')
    assert.equal(rest(config).oauth2ServerUri, undefined)
    assert.doesNotMatch(JSON.stringify(redact(config)), /s3cret/)
  })

  test('or from credentialFile, without its line end', () => {
    const dir = mkdtempSync(join(tmpdir(), 'floe-catalog-oauth-'))
    try {
      const file = join(dir, 'credential')
      writeFileSync(file, 'floe:from-file\n')
      const config = parseConfig(
        catalogWith(
          `  credentialFile: ${file}\n  scope: PRINCIPAL_ROLE:ALL\n  oauth2ServerUri: https://idp.example/token\n  accessDelegation: vended-credentials\n`,
        ),
        'floe.yaml',
        {},
      )
      assert.equal(rest(config).credential, 'floe:from-file')
      assert.equal(rest(config).scope, 'PRINCIPAL_ROLE:ALL')
      assert.equal(rest(config).oauth2ServerUri, 'https://idp.example/token')
      assert.equal(rest(config).accessDelegation, 'vended-credentials')
      assert.match(
        refusal(catalogWith(`  credentialFile: ${join(dir, 'none')}\n`)),
        /catalog\.credentialFile: .*no such file/,
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  const refusals: [string, string, NodeJS.ProcessEnv, RegExp][] = [
    [
      'a credential written in the file',
      catalogWith('  credential: a:b\n'),
      {},
      /catalog\.credential: a secret is not written in the configuration file: set FLOE_CATALOG__CREDENTIAL or catalog\.credentialFile/,
    ],
    [
      'a token written in the file',
      catalogWith('  token: abc\n'),
      {},
      /catalog\.token: a secret is not written in the configuration file: set FLOE_CATALOG__TOKEN$/,
    ],
    [
      'a token and a credential',
      base,
      { FLOE_CATALOG__TOKEN: 't', FLOE_CATALOG__CREDENTIAL: 'a:b' },
      /catalog\.token: set a token or a credential, not both/,
    ],
    [
      'a credential and a credentialFile',
      catalogWith('  credentialFile: /x\n'),
      { FLOE_CATALOG__CREDENTIAL: 'a:b' },
      /catalog\.credential: set credentialFile or FLOE_CATALOG__CREDENTIAL, not both/,
    ],
    [
      'a token endpoint that is not a URL',
      catalogWith('  oauth2ServerUri: idp/token\n'),
      {},
      /catalog\.oauth2ServerUri: expected an http\(s\) URL/,
    ],
    [
      'an access delegation Floe does not do',
      catalogWith('  accessDelegation: remote-signing\n'),
      {},
      /catalog\.accessDelegation: /,
    ],
    [
      'Azure storage without a key and without vended credentials',
      base.replace('ingestion:', 'storage:\n  type: azure\n  azure: {container: lake}\ningestion:'),
      {},
      /storage\.azure\.connectionString: missing \(set FLOE_STORAGE__AZURE__CONNECTION_STRING, or catalog\.accessDelegation: vended-credentials\)/,
    ],
    [
      "a dataset's Azure storage without a key",
      `${base}    storage: {type: azure, azure: {container: lake}}\n`,
      {},
      /datasets\[0\]\.storage\.azure\.connectionString: missing \(set FLOE_DATASETS__EVENTS__STORAGE__AZURE__CONNECTION_STRING/,
    ],
  ]
  for (const [name, text, env, expected] of refusals) {
    test(`refuses ${name}, naming the key`, () => assert.match(refusal(text, env), expected))
  }

  test('Azure storage without a key is accepted when the catalog vends credentials', () => {
    const text = catalogWith('  accessDelegation: vended-credentials\n').replace(
      'ingestion:',
      'storage:\n  type: azure\n  azure: {container: lake, blobEndpoint: "http://127.0.0.1:10000/devstoreaccount1"}\ningestion:',
    )
    const config = parseConfig(text, 'floe.yaml', {})
    assert.deepEqual(config.datasets[0]?.storage, {
      type: 'azure',
      azure: { container: 'lake', blobEndpoint: 'http://127.0.0.1:10000/devstoreaccount1' },
    })
  })
})

test('the documented OAuth 2 REST example is a valid configuration', async () => {
  const { readFileSync } = await import('node:fs')
  const { parse } = await import('yaml')
  const { configSchema } = await import('./schema.ts')
  const example = join(import.meta.dirname, '..', '..', 'docs', 'examples', 'floe.oauth-rest.yaml')
  const tree = parse(readFileSync(example, 'utf8')) as Record<string, unknown>
  const parsed = configSchema.safeParse(tree)
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues))
  assert.equal(parsed.data.catalog.type === 'rest' && parsed.data.catalog.accessDelegation, 'vended-credentials')
})

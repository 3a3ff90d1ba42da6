import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { catalogLabel } from './catalog.ts'
import { parseConfig, redact } from './load.ts'
import { oneDataset, refusal } from './test-support.ts'

const rest = `
kafka:
  brokers: [127.0.0.1:9092]
${oneDataset}`

function withCatalog(lines: string): string {
  return `${rest}catalog:\n  type: sql\n  warehouse: file:///lake\n${lines
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}\n`
}

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-catalog-config-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the SQL catalog section', () => {
  test('keeps the SQLite path form as it was', () => {
    const { catalog } = parseConfig(withCatalog('path: /var/lib/floe/catalog.db'), 'floe.yaml', {})
    assert.deepEqual(catalog, {
      type: 'sql',
      name: 'floe',
      warehouse: 'file:///lake',
      path: '/var/lib/floe/catalog.db',
    })
    assert.equal(catalogLabel(catalog), '/var/lib/floe/catalog.db')
  })

  test('reads a PostgreSQL uri, the password from FLOE_CATALOG__PASSWORD', () => {
    const { catalog } = parseConfig(withCatalog('uri: postgresql://floe@db.internal:6432/lake'), 'floe.yaml', {
      FLOE_CATALOG__PASSWORD: 's3cret',
    })
    assert.equal(catalog.type, 'sql')
    assert.deepEqual(catalog.type === 'sql' && catalog.postgres, {
      host: 'db.internal',
      port: 6432,
      database: 'lake',
      user: 'floe',
      password: 's3cret',
      connectTimeoutMs: 10_000,
      queryTimeoutMs: 30_000,
    })
    assert.equal(catalogLabel(catalog), 'postgresql://floe@db.internal:6432/lake')
    assert.doesNotMatch(JSON.stringify(redact(catalog)), /s3cret/)
  })

  test('reads host, port, database and user keys, the password from passwordFile, port 5432 by default', async () => {
    const file = join(dir, 'password')
    await writeFile(file, 'from-file\n')
    const { catalog } = parseConfig(
      withCatalog(`host: 10.0.0.5\ndatabase: lake\nuser: floe\npasswordFile: ${file}\nqueryTimeoutSeconds: 5`),
      'floe.yaml',
      {},
    )
    assert.ok(catalog.type === 'sql' && catalog.postgres)
    assert.equal(catalog.postgres.host, '10.0.0.5')
    assert.equal(catalog.postgres.port, 5432)
    assert.equal(catalog.postgres.password, 'from-file')
    assert.equal(catalog.postgres.queryTimeoutMs, 5000)
  })

  test('connects without a password when none is configured (a server that trusts the user)', () => {
    const { catalog } = parseConfig(withCatalog('uri: postgres://floe@127.0.0.1/lake'), 'floe.yaml', {})
    assert.ok(catalog.type === 'sql' && catalog.postgres)
    assert.equal(catalog.postgres.password, undefined)
    assert.equal(catalog.postgres.port, 5432)
  })

  test('refuses a password written in the YAML or inside the uri', () => {
    assert.match(
      refusal(withCatalog('uri: postgresql://floe@h/lake\npassword: hunter2')),
      /catalog\.password: a secret is not written in the configuration file: set FLOE_CATALOG__PASSWORD/,
    )
    const message = refusal(withCatalog('uri: postgresql://floe:hunter2@h/lake'))
    assert.match(message, /catalog\.uri: a password is not written in the uri/)
    assert.doesNotMatch(message, /hunter2/)
  })

  test('refuses what names no database, two databases, or half a connection, naming the key', () => {
    assert.match(refusal(withCatalog('name: floe')), /catalog\.path: set one of path \(a SQLite file\), uri or host/)
    assert.match(refusal(withCatalog('path: /x.db\nuri: postgresql://u@h/d')), /catalog\.path: set one of/)
    assert.match(refusal(withCatalog('path: /x.db\nuser: floe')), /catalog\.user: a SQLite catalog \(path\) takes no/)
    assert.match(refusal(withCatalog('host: h\nuser: floe')), /catalog\.database: missing/)
    assert.match(refusal(withCatalog('host: h\ndatabase: d')), /catalog\.user: missing/)
    assert.match(refusal(withCatalog('uri: postgresql://h/d')), /catalog\.uri: name the user/)
    assert.match(refusal(withCatalog('uri: postgresql://u@h')), /catalog\.uri: name the database/)
    assert.match(refusal(withCatalog('uri: postgresql://u@h/d?sslmode=require')), /catalog\.uri: query parameters/)
    assert.match(refusal(withCatalog('uri: mysql://u@h/d')), /catalog\.uri: expected postgresql:\/\//)
    assert.match(refusal(withCatalog('uri: postgresql://u@h/d\nport: 5433')), /catalog\.port: give uri or host/)
    assert.match(refusal(withCatalog('host: h\ndatabase: d\nuser: u\nport: 70000')), /catalog\.port:/)
    assert.match(
      refusal(withCatalog(`host: h\ndatabase: d\nuser: u\npasswordFile: ${join(dir, 'missing')}`)),
      /catalog\.passwordFile: .*missing: no such file/,
    )
  })
})

// docker-compose.yml stays correct for users who have Docker: it parses, every published port is
// on loopback, three workers share one configuration file that exists. Where Debian's
// docker-compose is installed, its own `config` validation runs too; where it is not, that test
// is skipped visibly (a failure in CI, which installs it: .ci/run).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'

const root = join(import.meta.dirname, '..', '..')

interface Service {
  image?: string
  ports?: string[]
  volumes?: string[]
  environment?: Record<string, string>
}

test('docker-compose.yml defines the stack and three workers, published on loopback only', () => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, Service>
  }
  const names = Object.keys(compose.services).sort()
  assert.deepEqual(names, ['azurite', 'floe-1', 'floe-2', 'floe-3', 'iceberg-rest', 'kafka'])
  for (const [name, service] of Object.entries(compose.services)) {
    for (const port of service.ports ?? []) assert.match(port, /^127\.0\.0\.1:/, `${name} publishes ${port}`)
  }
  for (const worker of ['floe-1', 'floe-2', 'floe-3']) {
    const config = compose.services[worker]?.volumes?.find((v) => v.endsWith(':/etc/floe/floe.yaml:ro'))
    assert.ok(config, `${worker} mounts the shared configuration`)
    assert.ok(existsSync(join(root, config.split(':')[0] ?? '')), `${config} exists`)
  }
})

test('docker-compose config accepts the file where docker-compose is installed', (t) => {
  let version: string
  try {
    version = execFileSync('docker-compose', ['version', '--short'], { encoding: 'utf8' }).trim()
  } catch {
    // Visible in the run's skip list, and a failure in CI, which has docker-compose.
    t.skip('needs docker-compose, which is not installed here (the structural check above still ran)')
    return
  }
  execFileSync('docker-compose', ['-f', join(root, 'docker-compose.yml'), 'config', '-q'], { stdio: 'pipe' })
  t.diagnostic(`validated with docker-compose ${version}`)
})

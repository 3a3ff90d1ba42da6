// `npm run test:integration`: runs every end-to-end test on the real local stack. Brings the stack
// up when it is not (and then down again afterwards, even when tests fail or the run is
// interrupted); leaves a stack it found running alone.
import { spawn } from 'node:child_process'
import { globSync } from 'node:fs'
import { join } from 'node:path'
import { running, services, sharedStackVariable, stackDir } from './stack/index.ts'

const root = join(import.meta.dirname, '..')
const stackScript = join(root, 'integration', 'stack', 'stack.ts')

// The files that freeze, stop or restart a server every test uses (the broker, the REST catalog,
// PostgreSQL, Azurite): they run after the others, one at a time, so no other test meets the
// outage. Every other file, the kill -9 and hang tests of workers included, runs beside another.
const outages = new Set([
  'integration/e2e/route-switch.test.ts',
  'integration/e2e/routing.test.ts',
  'integration/faults/broker-restart.test.ts',
  'integration/faults/isolation.test.ts',
  'integration/faults/postgres-restart.test.ts',
  'integration/faults/servers.test.ts',
  'integration/faults/storage.test.ts',
])

function exec(args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
  })
}

function stackIsUp(): boolean {
  const dir = stackDir()
  const names = services(dir).map((s) => s.name)
  return names.length > 0 && names.every((name) => running(dir, name))
}

let startedHere = false
let stopping: Promise<number> | undefined
function stopIfOurs(): Promise<number> {
  stopping ??= startedHere ? exec([stackScript, 'down']) : Promise.resolve(0)
  return stopping
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopIfOurs().then(() => process.exit(130))
  })
}

let code = 0
try {
  if (!stackIsUp()) {
    startedHere = true
    code = await exec([stackScript, 'up'])
    if (code !== 0) throw new Error('the local stack did not come up')
  }
  const given = process.argv.slice(2)
  // The interop suite (Spark, a heavy install of its own) runs only as `npm run test:interop`.
  const allTests = globSync('integration/**/*.test.ts', { cwd: root, exclude: ['integration/interop/**'] }).sort()
  const matched = new Set<string>()
  for (const pattern of given) {
    const found = globSync(pattern, { cwd: root })
    if (found.length === 0) throw new Error(`no test file matches ${pattern}`)
    for (const file of found) matched.add(file)
  }
  const files = given.length ? [...matched].sort() : allTests
  // Beside `spec`, the skip reporter lists every skipped and todo test and fails the run on a todo,
  // and on any skip when CI is set.
  const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout']
  reporters.push('--test-reporter=./integration/tools/skip-reporter.ts', '--test-reporter-destination=stderr')
  const base = ['--test', ...reporters, '--test-timeout=600000']
  const beside = files.filter((file) => !outages.has(file))
  const alone = files.filter((file) => outages.has(file))
  // Two files at a time: most of a test's time is waiting (commit intervals, settling, timeouts),
  // so two of them share the two cores of a CI machine well. The stack refuses an outage here.
  if (beside.length) code = await exec([...base, '--test-concurrency=2', ...beside], { [sharedStackVariable]: '1' })
  if (alone.length) code = (await exec([...base, '--test-concurrency=1', ...alone])) || code
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error))
  code ||= 1
} finally {
  await stopIfOurs()
}
process.exit(code)

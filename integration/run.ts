// `npm run test:integration`: runs every end-to-end test on the real local stack. Brings the stack
// up when it is not (and then down again afterwards, even when tests fail or the run is
// interrupted); leaves a stack it found running alone.
import { spawn } from 'node:child_process'
import { globSync } from 'node:fs'
import { join } from 'node:path'
import { running, services, stackDir } from './stack/index.ts'

const root = join(import.meta.dirname, '..')
const stackScript = join(root, 'integration', 'stack', 'stack.ts')

function exec(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: root })
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
  // The fault suite freezes and restarts the shared servers: its files run after the others, one
  // at a time, never beside a test that needs those servers to answer.
  const isFault = (pattern: string) => pattern.replace(/^\.\//, '').startsWith('integration/faults/')
  const phases = given.length
    ? [given.filter((p) => !isFault(p)), given.filter(isFault)]
    : [allTests.filter((p) => !isFault(p)), allTests.filter(isFault)]
  // Beside `spec`, the skip reporter lists every skipped and todo test and fails the run on a todo,
  // and on any skip when CI is set.
  const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout']
  reporters.push('--test-reporter=./integration/tools/skip-reporter.ts', '--test-reporter-destination=stderr')
  const base = ['--test', ...reporters, '--test-timeout=600000']
  const [others = [], faults = []] = phases
  if (others.length) code = await exec([...base, ...others])
  if (faults.length) code = (await exec([...base, '--test-concurrency=1', ...faults])) || code
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error))
  code ||= 1
} finally {
  await stopIfOurs()
}
process.exit(code)

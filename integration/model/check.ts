// `npm run model`: model-checks the commit protocol (docs/model/floe.pml, docs/model/floe-shared.pml
// for shared segments: one file holding several Kafka partitions' ranges, and docs/model/floe-routing.pml
// for the routing design: one partition into two tables with a ledger, and docs/model/floe-route-switch.pml
// for a route changed while the old one still runs) with spin. Each check
// generates pan with its switches, compiles it with gcc and searches the whole state space; the
// correct model must pass every check and each broken variant must yield its counterexample.
// Prints states explored and time per check. `--large` adds the bigger bounds documented in
// docs/model/README.md (minutes each; not part of CI). Exit code 1 when any expectation fails.
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const modelDir = join(import.meta.dirname, '..', '..', 'docs', 'model')

interface Check {
  name: string
  /** The Promela file in docs/model/; floe.pml unless said. */
  model?: string
  defines: string[]
  /** Liveness: search for acceptance cycles under weak fairness against the LTL claim. */
  liveness?: boolean
  /** Undefined: no error may be found. Otherwise a text the counterexample must show. */
  expectViolation?: string
}

const base = ['-DNP=1', '-DNR=2', '-DMAXC=2']

const checks: Check[] = [
  { name: 'safety: one fault of any kind, two coordinators', defines: [...base, '-DFAULTS=1', '-DREBALANCES=0'] },
  {
    name: 'safety: a rebalance, zombie participant',
    defines: ['-DNP=1', '-DNR=1', '-DMAXC=2', '-DFAULTS=0', '-DREBALANCES=1'],
  },
  { name: 'safety: two partitions', defines: ['-DNP=2', '-DNR=1', '-DMAXC=2', '-DFAULTS=0', '-DREBALANCES=0'] },
  {
    name: 'liveness: every record committed once faults stop',
    defines: ['-DLIVE', '-DNP=1', '-DNR=2', '-DFAULTS=1', '-DREBALANCES=0'],
    liveness: true,
  },
  {
    name: 'broken: no contiguity check',
    defines: [...base, '-DFAULTS=1', '-DREBALANCES=0', '-DNO_CONTIGUITY'],
    expectViolation: 'assertion violated',
  },
  {
    name: 'broken: contiguity checked once, not on each reload',
    defines: [...base, '-DFAULTS=1', '-DREBALANCES=0', '-DSTALE_CHECK'],
    expectViolation: 'assertion violated (held[i]<=1)',
  },
  {
    name: 'broken: no commit-id lookup after an unknown outcome',
    defines: [...base, '-DFAULTS=1', '-DREBALANCES=0', '-DNO_COMMIT_ID_LOOKUP'],
    expectViolation: 'assertion violated  !((landed[c]&(1<<p)))',
  },
  {
    name: 'shared segments, safety: one fault of any kind',
    model: 'floe-shared.pml',
    defines: ['-DNR=1', '-DMAXC=2', '-DFAULTS=1', '-DREBALANCES=0'],
  },
  {
    name: 'shared segments, safety: a partition moves while its rows sit in a shared rotation',
    model: 'floe-shared.pml',
    defines: ['-DNR=1', '-DMAXC=1', '-DFAULTS=0', '-DREBALANCES=1'],
  },
  {
    name: 'broken: shared rotation accepted when only some of its ranges are contiguous',
    model: 'floe-shared.pml',
    defines: ['-DNR=1', '-DMAXC=2', '-DFAULTS=0', '-DREBALANCES=1', '-DPARTIAL_ROTATION'],
    expectViolation: 'assertion violated (held[i]<=1)',
  },
  {
    name: 'broken: a revoked partition left unclaimed in a kept shared rotation',
    model: 'floe-shared.pml',
    defines: ['-DNR=1', '-DMAXC=2', '-DFAULTS=0', '-DREBALANCES=1', '-DUNCLAIM_REVOKED'],
    expectViolation: 'assertion violated (held[i]==',
  },
  {
    name: 'routing into two tables, safety: worker restarts, two coordinators',
    model: 'floe-routing.pml',
    defines: ['-DNR=4', '-DRESTARTS=2', '-DSTATUSES=3'],
  },
  {
    name: 'broken: the ledger moves inside the multi-table request',
    model: 'floe-routing.pml',
    defines: ['-DNR=3', '-DRESTARTS=2', '-DSTATUSES=3', '-DLEDGER_IN_REQUEST'],
    expectViolation: 'assertion violated',
  },
  {
    name: "broken: the ledger alone as every table's marker (no skip on replay)",
    model: 'floe-routing.pml',
    defines: ['-DNR=3', '-DRESTARTS=2', '-DSTATUSES=3', '-DLEDGER_ONLY'],
    expectViolation: 'assertion violated (held[j]<=1)',
  },
  {
    name: 'route switch, safety: the old route still committing, the switch dying and redone',
    model: 'floe-route-switch.pml',
    defines: ['-DNR=2', '-DSTATUSES=2', '-DRESTARTS=1'],
  },
  {
    name: 'route switch, safety: three records',
    model: 'floe-route-switch.pml',
    defines: ['-DNR=3', '-DSTATUSES=1', '-DRESTARTS=1'],
  },
  {
    name: 'route switch, safety: two statuses of the old route',
    model: 'floe-route-switch.pml',
    defines: ['-DNR=2', '-DOLD_STATUSES=2', '-DSTATUSES=1', '-DRESTARTS=1'],
  },
  ...(['NO_GATE', 'NO_FENCE', 'NO_FLOORS'] as const).map(
    (broken): Check => ({
      name: `broken: route switch without ${{ NO_GATE: 'the gate', NO_FENCE: 'the fences', NO_FLOORS: 'the floors' }[broken]}`,
      model: 'floe-route-switch.pml',
      defines: ['-DNR=2', '-DSTATUSES=1', '-DRESTARTS=1', `-D${broken}`],
      expectViolation: 'assertion violated (held[j]<=1)',
    }),
  ),
  {
    name: "broken: route switch, the new route judged by the old route's markers",
    model: 'floe-route-switch.pml',
    defines: ['-DNR=2', '-DSTATUSES=1', '-DRESTARTS=1', '-DSHARED_MARKER'],
    expectViolation: 'assertion violated ((((((2<=0)||(L<=0))||(held[0]==1))',
  },
]

const largeChecks: Check[] = [
  { name: 'large safety: a rebalance, two records', defines: [...base, '-DFAULTS=0', '-DREBALANCES=1'] },
  {
    name: 'large liveness: a fault and a rebalance',
    defines: ['-DLIVE', '-DNP=1', '-DNR=2', '-DFAULTS=1', '-DREBALANCES=1'],
    liveness: true,
  },
]

interface CheckResult {
  check: Check
  ok: boolean
  errors: number
  states: number
  seconds: number
  firstError: string | undefined
  output: string
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, output }))
  })
}

async function runCheck(check: Check): Promise<CheckResult> {
  const dir = mkdtempSync(join(tmpdir(), 'floe-model-'))
  const started = Date.now()
  try {
    const model = check.model ?? 'floe.pml'
    copyFileSync(join(modelDir, model), join(dir, model))
    // -m: a send to a full queue loses the message (the control topic never blocks a sender).
    const spin = await run('spin', ['-m', '-a', ...check.defines, model], dir)
    if (spin.code !== 0) throw new Error(`spin -a failed for ${check.name}:\n${spin.output}`)
    // -O1: compiling pan.c at -O2 takes longer than most of these searches.
    const cflags = ['-O1', '-DCOLLAPSE', '-DMEMLIM=4096', '-DVECTORSZ=2048']
    if (check.liveness) cflags.push('-DNFAIR=4')
    else cflags.push('-DSAFETY')
    const gcc = await run('gcc', [...cflags, '-o', 'pan', 'pan.c'], dir)
    if (gcc.code !== 0) throw new Error(`gcc failed for ${check.name}:\n${gcc.output}`)
    const panArgs = ['-m1000000', '-w24']
    if (check.liveness) panArgs.push('-a', '-f', '-N', 'committed')
    const pan = await run('./pan', panArgs, dir)
    const errors = Number(/errors: (\d+)/.exec(pan.output)?.[1] ?? Number.NaN)
    const states = Number(/(\d+) states, stored/.exec(pan.output)?.[1] ?? Number.NaN)
    const firstError = /^pan:1: (.*)$/m.exec(pan.output)?.[1]
    const incomplete = /Search not completed/.test(pan.output) && errors === 0
    const seconds = (Date.now() - started) / 1000
    const ok =
      check.expectViolation === undefined
        ? errors === 0 && !incomplete && Number.isFinite(states)
        : errors > 0 && (firstError ?? '').includes(check.expectViolation)
    return { check, ok, errors, states, seconds, firstError, output: pan.output }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<number> {
  const all = process.argv.includes('--large') ? [...checks, ...largeChecks] : checks
  for (const tool of ['spin', 'gcc']) {
    if (spawnSync(tool, ['-V'], { encoding: 'utf8' }).error) {
      console.error(`model: ${tool} is not installed (./dev setup installs spin; gcc compiles pan)`)
      return 1
    }
  }
  const started = Date.now()
  let failed = 0
  // Two checks at a time: the CI machines have two cores, and each pan is single-threaded.
  let next = 0
  const worker = async () => {
    while (next < all.length) {
      const check = all[next++] as Check
      const result = await runCheck(check)
      report(result)
      if (!result.ok) failed++
    }
  }
  await Promise.all([worker(), worker()])
  console.log(
    `model: ${all.length - failed}/${all.length} checks as expected in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
  return failed === 0 ? 0 : 1
}

function report(result: CheckResult): void {
  const { check } = result
  const verdict = check.expectViolation
    ? result.ok
      ? `counterexample as expected: ${result.firstError}`
      : `NO expected counterexample (errors ${result.errors}, first: ${result.firstError ?? 'none'})`
    : result.ok
      ? 'no error'
      : `FAILED: ${result.firstError ?? 'search incomplete'}`
  console.log(
    `${result.ok ? 'ok  ' : 'FAIL'} ${check.name} [${check.model ?? 'floe.pml'} ${check.defines.join(' ')}]: ${result.states} states, ${result.seconds.toFixed(1)} s, ${verdict}`,
  )
  if (!result.ok) console.log(result.output)
}

process.exit(await main())

// The Python side of the stack: a virtual environment with pyiceberg, the independent reader that
// every end-to-end test uses (through integration/verify) to prove Floe's tables are readable.
// requirements.txt names what we ask for; constraints.txt pins every transitive package so a
// fresh machine gets the same reader.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { paths, stackSources } from './layout.ts'

const requirements = join(stackSources, '..', 'requirements.txt')
const constraints = join(stackSources, '..', 'constraints.txt')

function wantedHash(): string {
  const hash = createHash('sha256').update(readFileSync(requirements))
  if (existsSync(constraints)) hash.update(readFileSync(constraints))
  return hash.digest('hex')
}

function pythonCommand(): string {
  return process.env.FLOE_PYTHON ?? 'python3'
}

/** Creates or refreshes the venv. Returns whether it installed anything. */
function stampOf(dir: string): string {
  return join(paths(dir).venv, '.requirements-sha256')
}

function upToDate(dir: string): boolean {
  const stamp = stampOf(dir)
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === wantedHash()
}

export function setupPython(dir: string): boolean {
  const p = paths(dir)
  const stamp = stampOf(dir)
  if (upToDate(dir)) return false
  rmSync(p.venv, { recursive: true, force: true })
  execFileSync(pythonCommand(), ['-m', 'venv', p.venv], { stdio: 'inherit' })
  const args = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements]
  if (existsSync(constraints)) args.push('-c', constraints)
  execFileSync(p.python, args, { stdio: 'inherit' })
  writeFileSync(stamp, wantedHash())
  return true
}

/** The venv exists and holds what requirements.txt asks for now (a new server's package, say). */
export function pythonReady(dir: string): boolean {
  return existsSync(paths(dir).python) && upToDate(dir)
}

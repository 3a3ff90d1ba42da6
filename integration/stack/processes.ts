// Background servers of the local stack: started detached with their output in .stack/logs,
// remembered by pid in .stack/pids.json, stopped by pid. A pid is only signalled when its command
// line still names the stack folder, so a recycled pid is never killed by mistake.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { paths } from './layout.ts'

export interface ServiceRecord {
  name: string
  pid: number
  log: string
  startedAt: string
}

type Registry = Record<string, ServiceRecord>

function readRegistry(dir: string): Registry {
  const file = paths(dir).pids
  if (!existsSync(file)) return {}
  return JSON.parse(readFileSync(file, 'utf8')) as Registry
}

function writeRegistry(dir: string, registry: Registry): void {
  writeFileSync(paths(dir).pids, `${JSON.stringify(registry, null, 2)}\n`)
}

export function services(dir: string): ServiceRecord[] {
  return Object.values(readRegistry(dir))
}

/** True while `pid` is alive and is one of ours (its command line names the stack folder). */
export function isOurs(pid: number, dir: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return cmdline.includes(dir)
  } catch {
    return false
  }
}

export function running(dir: string, name: string): ServiceRecord | undefined {
  const record = readRegistry(dir)[name]
  return record && isOurs(record.pid, dir) ? record : undefined
}

export interface StartSpec {
  name: string
  command: string
  args: string[]
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Run as this user and group (a server that refuses to run as root). */
  uid?: number
  gid?: number
}

export function startService(dir: string, spec: StartSpec): ServiceRecord {
  const logs = paths(dir).logs
  mkdirSync(logs, { recursive: true })
  const log = join(logs, `${spec.name}.log`)
  const out = openSync(log, 'a')
  // detached: its own process group, so `down` can stop the server and anything it forked.
  const child = spawn(spec.command, spec.args, {
    detached: true,
    stdio: ['ignore', out, out],
    env: spec.env ?? process.env,
    cwd: spec.cwd,
    ...(spec.uid === undefined ? {} : { uid: spec.uid }),
    ...(spec.gid === undefined ? {} : { gid: spec.gid }),
  })
  if (child.pid === undefined) throw new Error(`could not start ${spec.name}: ${spec.command}`)
  child.unref()
  const record: ServiceRecord = { name: spec.name, pid: child.pid, log, startedAt: new Date().toISOString() }
  const registry = readRegistry(dir)
  registry[spec.name] = record
  writeRegistry(dir, registry)
  return record
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {
      // already gone
    }
  }
}

/** Stops one service: SIGTERM, then SIGKILL after `graceMs`. Returns whether it was running. */
export async function stopService(dir: string, name: string, graceMs = 15_000): Promise<boolean> {
  const registry = readRegistry(dir)
  const record = registry[name]
  if (!record) return false
  const wasRunning = isOurs(record.pid, dir)
  if (wasRunning) {
    signalGroup(record.pid, 'SIGTERM')
    // A frozen service (integration/stack/faults.ts) acts on SIGTERM only once it runs again.
    signalGroup(record.pid, 'SIGCONT')
    const deadline = Date.now() + graceMs
    while (isOurs(record.pid, dir) && Date.now() < deadline) await sleep(100)
    if (isOurs(record.pid, dir)) {
      signalGroup(record.pid, 'SIGKILL')
      while (isOurs(record.pid, dir)) await sleep(50)
    }
  }
  delete registry[name]
  writeRegistry(dir, registry)
  return wasRunning
}

/** Kills a service at once (kill -9), for tests that crash a server on purpose. */
export function killService(dir: string, name: string): void {
  const record = readRegistry(dir)[name]
  if (record && isOurs(record.pid, dir)) signalGroup(record.pid, 'SIGKILL')
}

export function tail(file: string, lines = 40): string {
  if (!existsSync(file)) return ''
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n')
}

export class ServiceFailed extends Error {
  constructor(name: string, reason: string, log: string) {
    super(`${name} did not come up: ${reason}\n--- last lines of ${log} ---\n${tail(log)}`)
    this.name = 'ServiceFailed'
  }
}

/**
 * Polls `probe` until it answers true, the process dies, or `timeoutMs` passes. A probe that
 * throws counts as "not yet": servers refuse connections while they start.
 */
export async function waitReady(
  dir: string,
  record: ServiceRecord,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last = 'no answer yet'
  while (Date.now() < deadline) {
    if (!isOurs(record.pid, dir)) throw new ServiceFailed(record.name, 'the process exited', record.log)
    try {
      if (await probe()) return
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    await sleep(250)
  }
  throw new ServiceFailed(record.name, `not ready after ${timeoutMs / 1000} s (last probe: ${last})`, record.log)
}

/**
 * Freezes a service (SIGSTOP to its process group): it keeps its sockets but answers nothing, as
 * a server in a brownout does. A test that freezes must thaw in t.after, even when it fails.
 */
export function freeze(name: string, dir: string): void {
  const record = readRegistry(dir)[name]
  if (!record || !isOurs(record.pid, dir)) throw new Error(`cannot freeze ${name}: it is not running`)
  signalGroup(record.pid, 'SIGSTOP')
}

/** Lets a frozen service run again (SIGCONT); a service that is not running is left alone. */
export function thaw(name: string, dir: string): void {
  const record = readRegistry(dir)[name]
  if (record && isOurs(record.pid, dir)) signalGroup(record.pid, 'SIGCONT')
}

// One measurement per child process, so that no client's threads, sockets or heap from an earlier
// measurement run beside the next one, and process.cpuUsage() covers exactly one client. Internal.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { FloeError } from '../../shared/errors.ts'
import { type CapabilitiesTask, probeCapabilities } from './capabilities.ts'
import { type ClientName, here, type ThroughputResult, type ThroughputTask } from './common.ts'
import * as confluent from './confluent.ts'
import * as kafkajs from './kafkajs.ts'
import * as platformatic from './platformatic.ts'
import { type RebalanceTask, runRebalance } from './rebalance.ts'

export type Task = ThroughputTask | RebalanceTask | CapabilitiesTask

const adapters: Record<
  ClientName,
  {
    produce: (task: Extract<ThroughputTask, { kind: 'produce' }>) => Promise<ThroughputResult>
    consume: (task: Extract<ThroughputTask, { kind: 'consume' }>) => Promise<ThroughputResult>
  }
> = { platformatic, confluent, kafkajs }

const resultMarker = 'BENCH-RESULT '

/** Runs in the child: one task, its result as one marked JSON line on stdout. */
export async function runTaskInThisProcess(task: Task): Promise<void> {
  let result: unknown
  if (task.kind === 'produce') result = await adapters[task.client].produce(task)
  else if (task.kind === 'consume') result = await adapters[task.client].consume(task)
  else if (task.kind === 'rebalance') result = await runRebalance(task)
  else result = await probeCapabilities(task)
  process.stdout.write(
    `${resultMarker}${JSON.stringify(result, (_, v) => (typeof v === 'bigint' ? v.toString() : v))}\n`,
  )
}

/** Runs in the parent: spawns `node kafka-clients.bench.ts --task <json>` and reads its result. */
export function runTaskInChild<T>(task: Task, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'kafka-clients.bench.ts'), '--task', JSON.stringify(task)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = stdout.split('\n').find((candidate) => candidate.startsWith(resultMarker))
      if (line) {
        resolve(JSON.parse(line.slice(resultMarker.length)) as T)
        return
      }
      const what = `${task.kind} ${'client' in task ? task.client : ''} ${'variant' in task ? task.variant : ''}`
      reject(
        new FloeError('KAFKA_UNAVAILABLE', `task ${what} ended (${signal ?? code}) without a result`, {
          details: { stderr: stderr.slice(-2000), stdout: stdout.slice(-1000) },
        }),
      )
    })
  })
}

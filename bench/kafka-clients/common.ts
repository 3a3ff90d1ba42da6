// Shared by the bench entry, its child tasks and the three client adapters. Internal to this bench.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const here = dirname(fileURLToPath(import.meta.url))

export const topicPrefix = 'bench-kc-'
export const partitionCount = 6
export const messageBytes = 1024

export type ClientName = 'platformatic' | 'confluent' | 'kafkajs'
export const clientOrder: readonly ClientName[] = ['platformatic', 'confluent', 'kafkajs']

/** FLOE_KAFKA_BROKERS (comma-separated) wins; otherwise the local stack's endpoints file. */
export function bootstrapBrokers(): string[] {
  const fromEnv = process.env['FLOE_KAFKA_BROKERS']
  if (fromEnv) return fromEnv.split(',').map((broker) => broker.trim())
  const endpoints = JSON.parse(readFileSync(join(here, '..', '..', '.stack', 'endpoints.json'), 'utf8')) as {
    kafka: { brokers: string[] }
  }
  return endpoints.kafka.brokers
}

/**
 * 1 KB JSON values, built once: producing the same buffers through every client keeps
 * payload construction out of the comparison.
 */
export function jsonPayloads(count: number): Buffer[] {
  const payloads: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const head = JSON.stringify({ id: i, source: 'bench-kc', at: '2026-11-30T00:00:00.000Z', pad: '' })
    const padded = `${head.slice(0, -2)}${'x'.repeat(messageBytes - head.length)}"}`
    payloads.push(Buffer.from(padded))
  }
  return payloads
}

export interface ThroughputResult {
  messages: number
  bytes: number
  /** From client construction to the last message acknowledged or delivered. */
  totalMs: number
  /** Consume only: from the first delivered message to the last (group join and first fetch excluded). */
  steadyMs?: number
  cpuUserMs: number
  cpuSystemMs: number
  note?: string
}

export interface ProduceTask {
  kind: 'produce'
  client: ClientName
  variant: string
  topic: string
  messages: number
  batchSize: number
}

export interface ConsumeTask {
  kind: 'consume'
  client: ClientName
  variant: string
  topic: string
  groupId: string
  expected: number
}

export type ThroughputTask = ProduceTask | ConsumeTask

/** Wall clock and process CPU (all threads, so librdkafka's count too) since construction. */
export class Meter {
  readonly #startedAt = performance.now()
  readonly #cpu = process.cpuUsage()

  finish(messages: number, bytes: number, extra: { steadyMs?: number; note?: string } = {}): ThroughputResult {
    const totalMs = performance.now() - this.#startedAt
    const cpu = process.cpuUsage(this.#cpu)
    return { messages, bytes, totalMs, cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000, ...extra }
  }

  elapsed(): number {
    return performance.now() - this.#startedAt
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A promise with its resolver outside, for "done when the N-th message arrives". */
export function deferred<T = void>(): {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (e: unknown) => void
} {
  let resolve!: (value: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export function allPartitions(): number[] {
  return Array.from({ length: partitionCount }, (_, partition) => partition)
}

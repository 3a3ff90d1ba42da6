// The rebalance scenario: three members of one group on a 6-partition topic that a background
// producer keeps writing to. Start member 1, then 2, then 3, then stop 2; after each change, wait
// until the members' reported assignments cover all 6 partitions exactly once with nobody idle.
// Internal to this bench.
import { ProduceAcks, Producer } from '@platformatic/kafka'
import { FloeError } from '../../shared/errors.ts'
import { BenchAdmin } from './admin.ts'
import { allPartitions, bootstrapBrokers, type ClientName, partitionCount, sleep } from './common.ts'
import { createMember, type GroupMember, type GroupProtocol, type MemberReporter } from './group-members.ts'

export interface RebalanceTask {
  kind: 'rebalance'
  client: ClientName
  protocol: GroupProtocol
  topic: string
  groupId: string
  /** How long the application's revoke handler takes (0 for the timing runs). */
  revokeDelayMs: number
  run: number
}

export interface PhaseReport {
  change: string
  /** From the change until all 6 partitions are assigned exactly once, every live member owning some. */
  settledMs: number | null
  /** From the change until every partition has delivered a record to the member that owns it after settling. */
  flowingMs: number | null
  ownership: Record<string, number[]>
  /** Assignment callbacks/events the client delivered during this phase, per member. */
  events: Record<string, string[]>
  /** Assignment changes the bench saw only by polling the client's public property. */
  observed: Record<string, string[]>
  /** Scenario time at which the phase settled (to attribute revoke windows). */
  settledAtT: number | null
}

export interface RevokeWindow {
  member: string
  source: string
  awaited: boolean
  partitions: number[]
  startMs: number
  endMs: number
  /** Records of the revoked partitions delivered to the revoking member while its handler ran. */
  deliveredToRevoker: number
  /** Revoked partitions the member does not own once the group has settled again. */
  movedAway: number[]
  /** Records of moved-away partitions delivered to the revoking member while its handler ran. */
  movedDeliveredToRevoker: number
  /** Records of moved-away partitions delivered to other members while the revoke handler still ran. */
  deliveredToNewOwners: number
  /** Partitions whose group commit was past the highest offset ever delivered, checked at the handler's end. */
  committedPastDelivered: number[]
}

export interface RebalanceReport {
  client: ClientName
  protocol: GroupProtocol
  run: number
  revokeDelayMs: number
  phases: PhaseReport[]
  windows?: RevokeWindow[]
  /** Offsets below the end offset that no member ever received (with each client's default autocommit). */
  missing?: number
  duplicates?: number
  produced?: number
  failed?: string
}

const phaseTimeoutMs = 60_000

export async function runRebalance(task: RebalanceTask): Promise<RebalanceReport> {
  const startedAt = performance.now()
  const now = (): number => Math.round(performance.now() - startedAt)
  const admin = new BenchAdmin()
  const ownership = new Map<string, Set<number>>()
  const live = new Set<string>()
  const deliveries: { t: number; member: string; partition: number; offset: bigint }[] = []
  const maxDelivered = allPartitions().map(() => -1n)
  // Per partition, per member: when it last delivered a record (to tell when flow resumed).
  const lastDelivery = allPartitions().map(() => new Map<string, number>())
  const windows: RevokeWindow[] = []
  const openWindows = new Set<string>()
  let phaseEvents: Record<string, string[]> = {}
  let phaseObserved: Record<string, string[]> = {}

  const reporterFor = (member: string): MemberReporter => {
    const note = (text: string, source: string | null): void => {
      if (source === null) return
      const log = source === 'polled' ? phaseObserved : phaseEvents
      log[member] = [...(log[member] ?? []), `${now()}ms ${text}`]
    }
    return {
      delivered(partition, offset) {
        const t = now()
        deliveries.push({ t, member, partition, offset })
        lastDelivery[partition]!.set(member, t)
        if (offset > maxDelivered[partition]!) maxDelivered[partition] = offset
      },
      assignment(partitions, source) {
        note(`${source} [${partitions.join(',')}]`, source)
        ownership.set(member, new Set(partitions))
      },
      added(partitions, source) {
        note(`${source} +[${partitions.join(',')}]`, source)
        ownership.set(member, new Set([...(ownership.get(member) ?? []), ...partitions]))
      },
      removed(partitions, source) {
        note(`${source} -[${partitions.join(',')}]`, source)
        const owned = ownership.get(member) ?? new Set()
        for (const partition of partitions) owned.delete(partition)
      },
      async revoking(partitions, source, awaited) {
        note(`${source}${partitions ? ` [${partitions.join(',')}]` : ''}`, source)
        // A client that does not await the handler may fire its event repeatedly; one window at a time.
        if (!awaited && openWindows.has(member)) return
        openWindows.add(member)
        const window: RevokeWindow = {
          member,
          source,
          awaited,
          partitions: partitions ?? [...(ownership.get(member) ?? [])],
          startMs: now(),
          endMs: Number.NaN,
          deliveredToRevoker: 0,
          movedAway: [],
          movedDeliveredToRevoker: 0,
          deliveredToNewOwners: 0,
          committedPastDelivered: [],
        }
        windows.push(window)
        await sleep(task.revokeDelayMs)
        window.endMs = now()
        openWindows.delete(member)
        if (task.revokeDelayMs > 0) {
          const committed = await admin.committedOffsets(task.groupId, task.topic).catch(() => [])
          window.committedPastDelivered = window.partitions.filter(
            (partition) => (committed[partition] ?? -1n) > maxDelivered[partition]! + 1n,
          )
        }
      },
      event(name) {
        note(name, name)
      },
    }
  }

  const settled = (): boolean => {
    const owners = new Map<number, number>()
    for (const member of live) {
      const owned = ownership.get(member) ?? new Set()
      if (owned.size === 0 && live.size <= partitionCount) return false
      for (const partition of owned) owners.set(partition, (owners.get(partition) ?? 0) + 1)
    }
    return owners.size === partitionCount && [...owners.values()].every((count) => count === 1)
  }

  const waitFor = async (condition: () => boolean, timeoutMs: number): Promise<number | null> => {
    const deadline = performance.now() + timeoutMs
    while (performance.now() < deadline) {
      if (condition()) return performance.now()
      await sleep(10)
    }
    return null
  }

  const producer = new Producer({ clientId: 'bench-kc-rebalance-feed', bootstrapBrokers: bootstrapBrokers() })
  let producing = true
  // About 240 records/s spread over all partitions, so every partition always has something to fetch.
  const feed = (async () => {
    let sequence = 0
    while (producing) {
      const messages = allPartitions().map((partition) => ({
        topic: task.topic,
        partition,
        value: Buffer.from(JSON.stringify({ sequence: sequence++, partition })),
      }))
      await producer.send({ messages, acks: ProduceAcks.LEADER })
      await sleep(25)
    }
  })()

  const members = new Map<string, GroupMember>()
  const phases: PhaseReport[] = []
  const report: RebalanceReport = {
    client: task.client,
    protocol: task.protocol,
    run: task.run,
    revokeDelayMs: task.revokeDelayMs,
    phases,
  }
  try {
    for (const [action, member] of [
      ['start', 'm1'],
      ['start', 'm2'],
      ['start', 'm3'],
      ['stop', 'm2'],
    ] as const) {
      phaseEvents = {}
      phaseObserved = {}
      const changeAt = performance.now()
      const changeT = now()
      if (action === 'start') {
        const created = createMember({ ...task, name: member, reporter: reporterFor(member) })
        members.set(member, created)
        live.add(member)
        await created.start()
      } else {
        live.delete(member)
        await members.get(member)?.stop()
        members.delete(member)
        ownership.delete(member)
      }
      const settledAt = await waitFor(settled, phaseTimeoutMs)
      const owners = new Map<number, string>()
      for (const m of live) for (const partition of ownership.get(m) ?? []) owners.set(partition, m)
      const flowingAt =
        settledAt === null
          ? null
          : await waitFor(
              () =>
                allPartitions().every(
                  (partition) => (lastDelivery[partition]!.get(owners.get(partition) ?? '') ?? -1) >= changeT,
                ),
              30_000,
            )
      phases.push({
        change: `${action} ${member}`,
        settledMs: settledAt === null ? null : Math.round(settledAt - changeAt),
        flowingMs: flowingAt === null ? null : Math.round(flowingAt - changeAt),
        ownership: Object.fromEntries([...live].map((m) => [m, [...(ownership.get(m) ?? [])].sort()])),
        events: phaseEvents,
        observed: phaseObserved,
        settledAtT: settledAt === null ? null : Math.round(settledAt - startedAt),
      })
      if (settledAt === null) {
        throw new FloeError('KAFKA_UNAVAILABLE', `${action} ${member}: assignment never settled`)
      }
      // Let a slow revoke handler finish inside its own phase.
      await sleep(Math.max(1000, task.revokeDelayMs + 200))
    }
    // Later callbacks (the final shutdown's) belong to no phase.
    phaseEvents = {}
    phaseObserved = {}
    const phasesEndedT = now()
    producing = false
    await feed
    const ends = await admin.endOffsets(task.topic)
    await waitFor(() => allPartitions().every((p) => maxDelivered[p]! + 1n >= ends[p]!), 30_000)
    const scenarioWindows = windows.filter((window) => window.startMs < phasesEndedT)
    Object.assign(report, analyse(deliveries, scenarioWindows, phases, ends))
  } catch (error) {
    report.failed = error instanceof Error ? error.message : String(error)
  } finally {
    producing = false
    await feed.catch(() => {})
    for (const member of members.values()) await member.stop().catch(() => {})
    await producer.close()
    await admin.close()
  }
  return report
}

function analyse(
  deliveries: { t: number; member: string; partition: number; offset: bigint }[],
  windows: RevokeWindow[],
  phases: PhaseReport[],
  ends: bigint[],
): Pick<RebalanceReport, 'windows' | 'missing' | 'duplicates' | 'produced'> {
  for (const window of windows) {
    const revoked = new Set(window.partitions)
    const settledAfter = phases.find((phase) => (phase.settledAtT ?? -1) >= window.startMs)
    const keeps = new Set(settledAfter?.ownership[window.member] ?? [])
    window.movedAway = window.partitions.filter((partition) => !keeps.has(partition))
    const moved = new Set(window.movedAway)
    for (const d of deliveries) {
      if (d.t < window.startMs || d.t > window.endMs) continue
      if (d.member === window.member && revoked.has(d.partition)) window.deliveredToRevoker++
      if (d.member === window.member && moved.has(d.partition)) window.movedDeliveredToRevoker++
      if (d.member !== window.member && moved.has(d.partition)) window.deliveredToNewOwners++
    }
  }
  let missing = 0
  let duplicates = 0
  for (const partition of allPartitions()) {
    const seen = new Map<bigint, number>()
    for (const d of deliveries) if (d.partition === partition) seen.set(d.offset, (seen.get(d.offset) ?? 0) + 1)
    for (let offset = 0n; offset < ends[partition]!; offset++) {
      const count = seen.get(offset) ?? 0
      if (count === 0) missing++
      else duplicates += count - 1
    }
  }
  const produced = Number(ends.reduce((sum, end) => sum + end, 0n))
  return { windows, missing, duplicates, produced }
}

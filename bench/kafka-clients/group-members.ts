// One consumer-group member per client, reporting what the client tells the application about its
// assignment, as the rebalance scenario needs it. Internal to this bench.
import { Consumer as PlatformaticConsumer } from '@platformatic/kafka'
import { FloeError } from '../../shared/errors.ts'
import { bootstrapBrokers, type ClientName } from './common.ts'
import { kafkaJs } from './confluent.ts'
import { kafka } from './kafkajs.ts'

export type GroupProtocol = 'eager' | 'cooperative' | 'consumer'

/** What a member reports; the scenario turns these into ownership, windows and timings. */
export interface MemberReporter {
  delivered(partition: number, offset: bigint): void
  /**
   * The member's whole assignment. `source` names the client callback or event that said so;
   * 'polled' when the bench read it from a property; null for the bench's own bookkeeping.
   */
  assignment(partitions: number[], source: string | null): void
  /** An incremental change (cooperative / KIP-848), `source` as above. */
  added(partitions: number[], source: string | null): void
  removed(partitions: number[], source: string | null): void
  /**
   * A revocation began; the promise is the application's (slow) revoke handler. `null` partitions:
   * the client does not say which. A client that awaits it passes awaited=true.
   */
  revoking(partitions: number[] | null, source: string, awaited: boolean): Promise<void>
  event(name: string): void
}

export interface GroupMember {
  start(): Promise<void>
  stop(): Promise<void>
}

export interface MemberOptions {
  client: ClientName
  protocol: GroupProtocol
  name: string
  topic: string
  groupId: string
  reporter: MemberReporter
}

// Same liveness settings for every classic-protocol member; KIP-848 members use the broker's.
const sessionTimeout = 10_000
const heartbeatInterval = 1_000
const rebalanceTimeout = 30_000

export function createMember(options: MemberOptions): GroupMember {
  if (options.client === 'kafkajs') return kafkajsMember(options)
  if (options.client === 'confluent') return confluentMember(options)
  return platformaticMember(options)
}

function kafkajsMember({ protocol, topic, groupId, reporter }: MemberOptions): GroupMember {
  if (protocol !== 'eager') throw new FloeError('CONFIG_INVALID', `kafkajs has no ${protocol} protocol`)
  const consumer = kafka().consumer({ groupId, sessionTimeout, heartbeatInterval, rebalanceTimeout })
  // kafkajs only has instrumentation events: neither is awaited, and a join carries the full assignment.
  consumer.on(consumer.events.REBALANCING, () => {
    void reporter.revoking(null, 'REBALANCING event', false)
  })
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    reporter.assignment(event.payload.memberAssignment[topic] ?? [], 'GROUP_JOIN event')
  })
  return {
    async start() {
      await consumer.connect()
      await consumer.subscribe({ topics: [topic], fromBeginning: true })
      await consumer.run({
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) reporter.delivered(batch.partition, BigInt(message.offset))
        },
      })
    },
    async stop() {
      await consumer.disconnect()
    },
  }
}

function confluentMember({ protocol, topic, groupId, reporter }: MemberOptions): GroupMember {
  const classic = protocol !== 'consumer'
  const consumer = kafkaJs().consumer({
    ...(classic ? {} : { 'group.protocol': 'consumer' as const }),
    kafkaJS: {
      groupId,
      fromBeginning: true,
      ...(classic ? { sessionTimeout, heartbeatInterval, rebalanceTimeout } : {}),
      ...(protocol === 'cooperative' ? { partitionAssigners: ['cooperative-sticky' as never] } : {}),
    },
    // librdkafka's rebalance callback; the KafkaJS layer awaits it before assigning or unassigning.
    rebalance_cb: async (error: { code: number }, assignment: { partition: number }[]) => {
      const partitions = assignment.map((tp) => tp.partition)
      const incremental = protocol !== 'eager'
      if (error.code === assignCode) {
        if (incremental) reporter.added(partitions, 'rebalance_cb assign (incremental)')
        else reporter.assignment(partitions, 'rebalance_cb assign')
      } else if (error.code === revokeCode) {
        await reporter.revoking(partitions, 'rebalance_cb revoke', true)
        // The KafkaJS layer unassigns once this callback returns.
        reporter.removed(partitions, null)
      } else {
        reporter.event(`rebalance_cb error ${error.code}`)
      }
    },
  })
  return {
    async start() {
      await consumer.connect()
      await consumer.subscribe({ topics: [topic] })
      void consumer.run({
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) reporter.delivered(batch.partition, BigInt(message.offset))
        },
      })
    },
    async stop() {
      await consumer.disconnect()
    },
  }
}

const assignCode = -175 // RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS
const revokeCode = -174 // RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS

function platformaticMember({ protocol, name, topic, groupId, reporter }: MemberOptions): GroupMember {
  const common = { clientId: `bench-kc-${name}`, bootstrapBrokers: bootstrapBrokers(), groupId }
  const consumer =
    protocol === 'consumer'
      ? new PlatformaticConsumer({ ...common, groupProtocol: 'consumer' })
      : new PlatformaticConsumer({
          ...common,
          sessionTimeout,
          heartbeatInterval,
          rebalanceTimeout,
          ...(protocol === 'cooperative' ? { protocols: [{ name: 'cooperative-sticky', version: 3 }] } : {}),
        })
  // Neither event is awaited by the client; 'consumer:group:rebalance' does not say which partitions go.
  consumer.on('consumer:group:rebalance', () => {
    void reporter.revoking(null, 'consumer:group:rebalance event', false)
  })
  consumer.on('consumer:group:join', (payload) => {
    if (payload.assignments) {
      reporter.assignment(payload.assignments.find((a) => a.topic === topic)?.partitions ?? [], 'consumer:group:join')
    } else {
      reporter.event('consumer:group:join without assignments')
    }
  })
  // Under KIP-848 the client emits no event when the assignment changes: poll the public property.
  let seen = ''
  const poll = setInterval(() => {
    const partitions = consumer.assignments?.find((a) => a.topic === topic)?.partitions ?? []
    const key = [...partitions].sort((a, b) => a - b).join(',')
    if (key !== seen && consumer.assignments !== null) {
      seen = key
      reporter.assignment(partitions, 'polled')
    }
  }, 20)
  let stream: Awaited<ReturnType<typeof consumer.consume>> | undefined
  return {
    async start() {
      stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest' })
      stream.on('data', (message) => reporter.delivered(message.partition, message.offset))
      stream.on('error', (error) => reporter.event(`stream error ${error.message}`))
    },
    async stop() {
      clearInterval(poll)
      await stream?.close()
      await consumer.close(true)
    },
  }
}

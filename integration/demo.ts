// `./dev demo`: the main job for a newcomer. Until the worker exists (issues #4 and #5) it shows
// what the local stack holds: Kafka topics, the REST catalog's namespaces and tables, and the
// Azurite container, so one can see every part is real and reachable.
import { BlobServiceClient } from '@azure/storage-blob'
import { Admin } from '@platformatic/kafka'
import { readEndpoints } from './stack/index.ts'

const endpoints = readEndpoints()

const admin = new Admin({ clientId: 'floe-demo', bootstrapBrokers: endpoints.kafka.brokers })
const topics = await admin.listTopics()
const cluster = await admin.metadata({ topics: [] })
await admin.close()
console.log(`kafka ${endpoints.kafka.bootstrap}: cluster ${cluster.id}, ${cluster.brokers.size} broker(s)`)
console.log(`  topics: ${topics.length ? topics.join(', ') : '(none yet)'}`)

const get = async (path: string) =>
  (await fetch(`${endpoints.rest.uri}${path}`)).json() as Promise<Record<string, unknown>>
const { namespaces } = (await get('/v1/namespaces')) as { namespaces: string[][] }
console.log(`iceberg rest catalog ${endpoints.rest.uri}: warehouse ${endpoints.rest.warehouse}`)
if (namespaces.length === 0) console.log('  namespaces: (none yet)')
for (const namespace of namespaces) {
  const name = namespace.join('\x1f')
  const { identifiers } = (await get(`/v1/namespaces/${encodeURIComponent(name)}/tables`)) as {
    identifiers: { name: string }[]
  }
  console.log(`  ${namespace.join('.')}: ${identifiers.map((t) => t.name).join(', ') || '(no tables)'}`)
}

const container = BlobServiceClient.fromConnectionString(endpoints.azurite.connectionString).getContainerClient(
  endpoints.azurite.container,
)
let blobs = 0
for await (const _ of container.listBlobsFlat()) blobs++
console.log(`azurite ${endpoints.azurite.blobEndpoint}: container ${endpoints.azurite.container}, ${blobs} blob(s)`)
console.log(`pyiceberg: integration/verify <namespace.table> reads any table whole (venv ${endpoints.python})`)
console.log('\nThe stack keeps running; stop it with: npm run stack -- down')

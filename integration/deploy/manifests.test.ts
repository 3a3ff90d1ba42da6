// deploy/kubernetes checked offline: every manifest the kustomization lists against the Kubernetes
// schemas kubernetes-validate ships (1.29 and 1.37, strict), KEDA's kinds against the schema of
// cloudcoil's KEDA models (generated from KEDA's CRDs, made strict); a misspelt field is refused.
// Then what the operator's guide promises of them: the probes, the grace period above the drain
// timeout, secrets only through FLOE_ variables from Secrets, the WAL volume's size given to the
// disk watermark, and a ScaledObject on the dataset's consumer group capped at the partitions.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parse, parseAllDocuments } from 'yaml'
import { parseConfig } from '../../shared/config/index.ts'
import { endpoints } from '../harness.ts'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..', '..')
const dir = join(root, 'deploy', 'kubernetes')
const validator = join(import.meta.dirname, 'validate_manifests.py')
const versions = ['1.29.0', '1.37.0']

interface Manifest {
  apiVersion: string
  kind: string
  metadata: { name: string }
  // biome-ignore lint/suspicious/noExplicitAny: a manifest is checked by path below, after its schema check
  spec?: any
  data?: Record<string, string>
  stringData?: Record<string, string>
}

interface Report {
  file: string
  kind: string
  name: string
  error: string | null
}

async function validate(files: string[]): Promise<{ code: number; report: Report[] }> {
  const args = [validator, ...versions.flatMap((v) => ['--version', v]), ...files]
  try {
    const { stdout } = await run(endpoints().python, args, { maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, report: JSON.parse(stdout) as Report[] }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    if (!e.stdout?.startsWith('[')) throw new Error(`the validator failed: ${e.stderr}`)
    return { code: e.code, report: JSON.parse(e.stdout) as Report[] }
  }
}

async function resources(): Promise<string[]> {
  const kustomization = parse(await readFile(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] }
  return kustomization.resources.map((file) => join(dir, file))
}

async function manifests(): Promise<Manifest[]> {
  const all: Manifest[] = []
  for (const file of await resources()) {
    for (const doc of parseAllDocuments(await readFile(file, 'utf8'))) all.push(doc.toJS() as Manifest)
  }
  return all
}

const find = (all: Manifest[], kind: string) => {
  const found = all.filter((m) => m.kind === kind)
  assert.equal(found.length, 1, `one ${kind}`)
  return found[0] as Manifest
}

test('every manifest of the kustomization is valid against the Kubernetes and KEDA schemas', async () => {
  const { code, report } = await validate(await resources())
  assert.deepEqual(
    report.filter((r) => r.error !== null),
    [],
  )
  assert.equal(code, 0)
  assert.deepEqual([...new Set(report.map((r) => r.kind))].sort(), [
    'ConfigMap',
    'Deployment',
    'PodDisruptionBudget',
    'ScaledObject',
    'Secret',
    'Service',
    'TriggerAuthentication',
  ])
})

test('a misspelt field is refused, in a Kubernetes kind and in a KEDA kind', async () => {
  const scratch = await mkdtemp(join(tmpdir(), 'floe-manifests-'))
  try {
    const deployment = join(scratch, 'deployment.yaml')
    const scaled = join(scratch, 'scaledobject.yaml')
    await writeFile(
      deployment,
      (await readFile(join(dir, 'deployment.yaml'), 'utf8')).replace(
        'terminationGracePeriodSeconds',
        'terminationGracePeriod',
      ),
    )
    await writeFile(
      scaled,
      (await readFile(join(dir, 'keda-scaledobject.yaml'), 'utf8')).replace('  maxReplicaCount:', '  maxReplicas:'),
    )
    const { code, report } = await validate([deployment, scaled])
    assert.equal(code, 1)
    assert.match(report[0]?.error ?? '', /'terminationGracePeriod' was unexpected/)
    assert.match(report[1]?.error ?? '', /'maxReplicas' was unexpected/)
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
})

test('the manifests keep what docs/operations.md says of them', async () => {
  const all = await manifests()
  const configMap = find(all, 'ConfigMap')
  const deployment = find(all, 'Deployment')
  const scaled = find(all, 'ScaledObject')
  const pod = deployment.spec.template.spec
  const container = pod.containers[0]
  const secrets = all.filter((m) => m.kind === 'Secret')

  // The configuration is valid as a worker loads it, its secrets given through the environment.
  const env: NodeJS.ProcessEnv = {}
  for (const variable of container.env) {
    if (!variable.valueFrom?.secretKeyRef) continue
    const { name, key } = variable.valueFrom.secretKeyRef
    const value = secrets.find((s) => s.metadata.name === name)?.stringData?.[key]
    assert.ok(value !== undefined, `${variable.name}: secret ${name} has ${key}`)
    env[variable.name] = value
  }
  assert.deepEqual(Object.keys(env).sort(), [
    'FLOE_CATALOG__TOKEN',
    'FLOE_KAFKA__SASL__PASSWORD',
    'FLOE_KAFKA__SSL__CA_PEM',
    'FLOE_STORAGE__AZURE__CONNECTION_STRING',
  ])
  const text = configMap.data?.['floe.yaml'] ?? ''
  for (const secret of Object.values(env)) assert.ok(!text.includes(`: ${secret}`), 'no secret in the ConfigMap')
  const config = parseConfig(text, 'configmap.yaml', env)
  assert.equal(config.kafka.sasl?.mechanism, 'scram-sha-512')

  assert.deepEqual(container.args, ['run', '--config', '/etc/floe/config/floe.yaml'])
  const port = container.ports.find((p: { name: string }) => p.name === 'metrics')
  assert.equal(port.containerPort, config.metrics.port)
  assert.equal(container.livenessProbe.httpGet.path, '/livez')
  assert.equal(container.readinessProbe.httpGet.path, '/readyz')
  assert.ok(
    pod.terminationGracePeriodSeconds > config.ingestion.drainTimeoutSeconds,
    `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds} > drainTimeoutSeconds ${config.ingestion.drainTimeoutSeconds}`,
  )
  for (const resource of ['cpu', 'memory']) assert.ok(container.resources.requests[resource], `a ${resource} request`)

  // The WAL: an emptyDir whose size the disk watermark is taken of.
  const walMount = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === config.ingestion.wal.dir)
  const wal = pod.volumes.find((v: { name: string }) => v.name === walMount?.name)
  assert.equal(wal?.emptyDir?.sizeLimit, '10Gi')
  assert.equal(config.ingestion.wal.volumeSizeBytes, 10 * 1024 ** 3)

  const budget = find(all, 'PodDisruptionBudget')
  assert.deepEqual(budget.spec.selector.matchLabels, deployment.spec.selector.matchLabels)

  // KEDA: the dataset's consumer group and topic, the Deployment, at most one worker a partition.
  const dataset = config.datasets[0]
  assert.ok(dataset)
  assert.deepEqual(scaled.spec.scaleTargetRef, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: deployment.metadata.name,
  })
  const trigger = scaled.spec.triggers[0]
  assert.equal(trigger.type, 'kafka')
  assert.equal(trigger.metadata.consumerGroup, `${config.kafka.groupPrefix}-${dataset.name}`)
  assert.equal(trigger.metadata.topic, dataset.topics[0])
  assert.equal(trigger.metadata.bootstrapServers, config.kafka.brokers.join(','))
  assert.equal(trigger.metadata.allowIdleConsumers, 'false')
  assert.ok(scaled.spec.maxReplicaCount >= scaled.spec.minReplicaCount)
  assert.equal(trigger.authenticationRef.name, find(all, 'TriggerAuthentication').metadata.name)
  // The CRD types a trigger's metadata as a map of strings: its keys are checked here against the
  // parameters KEDA documents for the Kafka scaler and its TriggerAuthentication (KEDA 2.x docs,
  // "Apache Kafka" scaler page), written down from that page.
  const kafkaScalerParameters = [
    'bootstrapServers',
    'consumerGroup',
    'topic',
    'lagThreshold',
    'activationLagThreshold',
    'offsetResetPolicy',
    'allowIdleConsumers',
    'scaleToZeroOnInvalidOffset',
    'excludePersistentLag',
    'limitToPartitionsWithLag',
    'partitionLimitation',
    'version',
    'sasl',
    'tls',
    'unsafeSsl',
  ]
  const kafkaAuthParameters = ['sasl', 'username', 'password', 'tls', 'ca', 'cert', 'key', 'keyPassword']
  assert.deepEqual(
    Object.keys(trigger.metadata).filter((key) => !kafkaScalerParameters.includes(key)),
    [],
  )
  for (const value of Object.values(trigger.metadata))
    assert.equal(typeof value, 'string', 'KEDA metadata values are strings')
  const auth = find(all, 'TriggerAuthentication')
  assert.deepEqual(
    auth.spec.secretTargetRef
      .map((ref: { parameter: string }) => ref.parameter)
      .filter((p: string) => !kafkaAuthParameters.includes(p)),
    [],
  )
  for (const ref of auth.spec.secretTargetRef) {
    const secret = secrets.find((s) => s.metadata.name === ref.name)
    assert.ok(secret?.stringData?.[ref.key] !== undefined, `secret ${ref.name} has ${ref.key}`)
  }
})

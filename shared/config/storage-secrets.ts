// Storage secrets come from the environment only (FLOE_STORAGE__<BACKEND>__* for the top-level
// storage, FLOE_DATASETS__<NAME>__STORAGE__<BACKEND>__* for a dataset's own), from the AWS
// credential chain for S3, or vended by the catalog: one written in the YAML is refused before the
// environment's overrides are applied.
import { FloeError } from '../errors.ts'

/** Per backend: its secret keys, and where else the secret may come from. */
const writtenSecrets = {
  s3: { keys: ['accessKeyId', 'secretAccessKey', 'sessionToken'], otherwise: 'or use the AWS credential chain' },
  azure: { keys: ['connectionString'], otherwise: 'or catalog.accessDelegation: vended-credentials' },
} as const

function upperSnake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

function refuseIn(storage: unknown, keyPath: string, variablePrefix: string, source: string): void {
  for (const [backend, { keys, otherwise }] of Object.entries(writtenSecrets)) {
    const settings = (storage as Record<string, unknown> | undefined)?.[backend]
    if (!settings || typeof settings !== 'object') continue
    for (const key of keys) {
      if ((settings as Record<string, unknown>)[key] === undefined) continue
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: ${keyPath}.${backend}.${key}: a secret is not written in the configuration file: set ${variablePrefix}__${backend.toUpperCase()}__${upperSnake(key)} (${otherwise})`,
      )
    }
  }
}

export function refuseWrittenStorageSecrets(tree: Record<string, unknown>, source: string): void {
  refuseIn(tree['storage'], 'storage', 'FLOE_STORAGE', source)
  const datasets = tree['datasets']
  if (!Array.isArray(datasets)) return
  datasets.forEach((dataset: unknown, i) => {
    const name = (dataset as { name?: unknown } | undefined)?.name
    const variable =
      typeof name === 'string' ? `FLOE_DATASETS__${upperSnake(name)}__STORAGE` : `FLOE_DATASETS__${i}__STORAGE`
    refuseIn((dataset as { storage?: unknown } | undefined)?.storage, `datasets[${i}].storage`, variable, source)
  })
}

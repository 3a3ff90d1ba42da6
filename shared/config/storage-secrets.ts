// S3 credentials come from the environment only (FLOE_STORAGE__S3__* for the top-level storage,
// FLOE_DATASETS__<NAME>__STORAGE__S3__* for a dataset's own) or from the AWS credential chain:
// one written in the YAML is refused before the environment's overrides are applied.
import { FloeError } from '../errors.ts'

const s3Secrets = ['accessKeyId', 'secretAccessKey', 'sessionToken'] as const

function upperSnake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()
}

function refuseIn(storage: unknown, keyPath: string, variablePrefix: string, source: string): void {
  const s3 = (storage as { s3?: unknown } | undefined)?.s3
  if (!s3 || typeof s3 !== 'object') return
  for (const key of s3Secrets) {
    if ((s3 as Record<string, unknown>)[key] !== undefined) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: ${keyPath}.s3.${key}: a secret is not written in the configuration file: set ${variablePrefix}__S3__${upperSnake(key)} (or use the AWS credential chain)`,
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

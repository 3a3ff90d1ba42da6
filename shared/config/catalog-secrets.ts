// The catalog section's secrets: the OAuth 2 credential and the static token come from the
// environment (FLOE_CATALOG__CREDENTIAL, FLOE_CATALOG__TOKEN) or, for the credential, a file the
// configuration names; one written in the YAML itself is refused, as Kafka's are. And Azure
// storage without a connection string is only accepted when the catalog vends the credentials.
// Internal to shared/config.
import { FloeError } from '../errors.ts'
import { readSecret } from './kafka-security.ts'
import type { RawConfig } from './schema.ts'

const writtenSecrets = [
  ['token', 'FLOE_CATALOG__TOKEN', undefined],
  ['credential', 'FLOE_CATALOG__CREDENTIAL', 'credentialFile'],
] as const

/** Refuses a catalog secret in the file's own tree (before the environment's overrides are applied). */
export function refuseWrittenCatalogSecrets(tree: Record<string, unknown>, source: string): void {
  const catalog = tree['catalog'] as Record<string, unknown> | undefined
  for (const [key, variable, file] of writtenSecrets) {
    if (catalog && typeof catalog === 'object' && catalog[key] !== undefined) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: catalog.${key}: a secret is not written in the configuration file: set ${variable}${file ? ` or catalog.${file}` : ''}`,
      )
    }
  }
}

export type CatalogConfig = RawConfig['catalog']

/** The catalog section with its credential file read. */
export function resolveCatalog(raw: CatalogConfig, source: string): CatalogConfig {
  if (raw.type !== 'rest' || raw.credentialFile === undefined) return raw
  const { credentialFile, ...rest } = raw
  return { ...rest, credential: readSecret(source, 'catalog.credentialFile', credentialFile) }
}

/** Azure storage with no connection string of its own needs the catalog to vend its SAS tokens. */
export function checkStorageCredentials(config: Pick<RawConfig, 'catalog' | 'storage' | 'datasets'>, source: string) {
  const vended = config.catalog.type === 'rest' && config.catalog.accessDelegation === 'vended-credentials'
  const sections: [string, string, RawConfig['storage'] | undefined][] = [
    ['storage', 'FLOE_STORAGE__AZURE__CONNECTION_STRING', config.storage],
    ...config.datasets.map((d, i): [string, string, RawConfig['storage'] | undefined] => [
      `datasets[${i}].storage`,
      `FLOE_DATASETS__${d.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}__STORAGE__AZURE__CONNECTION_STRING`,
      d.storage,
    ]),
  ]
  for (const [path, variable, storage] of sections) {
    if (storage?.type === 'azure' && storage.azure.connectionString === undefined && !vended) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: ${path}.azure.connectionString: missing (set ${variable}, or catalog.accessDelegation: vended-credentials)`,
      )
    }
  }
}

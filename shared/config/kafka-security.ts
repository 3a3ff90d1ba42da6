// The Kafka section's TLS and SASL settings as a connection needs them: the PEM files and secret
// files the configuration names are read here, once, at load; and a secret written in the YAML
// itself is refused (a configuration file is shared, copied and committed; the environment and a
// mounted secret file are where secrets live). Internal to shared/config.
import { readFileSync } from 'node:fs'
import { FloeError } from '../errors.ts'
import type { RawKafkaConfig } from './schema.ts'

export interface KafkaTlsSettings {
  /** PEM of the CA that signed the brokers' certificates; unset: the system's CAs. */
  ca?: string
  /** PEM of the client certificate and of its private key, for brokers that ask for one. */
  cert?: string
  key?: string
  verifyHostname: boolean
}

export type KafkaSaslSettings =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; tokenEndpointUrl: string; clientId: string; clientSecret: string; scope?: string }

export interface KafkaConfig extends Omit<RawKafkaConfig, 'ssl' | 'sasl'> {
  /** `true`: TLS trusting the system's CAs, with hostname verification. */
  ssl: boolean | KafkaTlsSettings
  sasl?: KafkaSaslSettings
}

/** The secrets of the Kafka section, by key path: each must come from the environment or a file. */
const writtenSecrets = [
  ['sasl', 'password', 'FLOE_KAFKA__SASL__PASSWORD', 'passwordFile'],
  ['sasl', 'clientSecret', 'FLOE_KAFKA__SASL__CLIENT_SECRET', 'clientSecretFile'],
  ['ssl', 'keyPem', 'FLOE_KAFKA__SSL__KEY_PEM', 'keyFile'],
] as const

/** Refuses a Kafka secret in the file's own tree (before the environment's overrides are applied). */
export function refuseWrittenSecrets(tree: Record<string, unknown>, source: string): void {
  const kafka = tree['kafka'] as Record<string, Record<string, unknown> | undefined> | undefined
  for (const [section, key, variable, file] of writtenSecrets) {
    const value = kafka?.[section]
    if (value && typeof value === 'object' && value[key] !== undefined) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: kafka.${section}.${key}: a secret is not written in the configuration file: set ${variable} or ${section}.${file}`,
      )
    }
  }
}

function readNamed(source: string, key: string, file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new FloeError(
      'CONFIG_INVALID',
      `${source}: ${key}: ${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read (${code})`}`,
    )
  }
}

/** A secret file's content without the line end an editor or `echo` leaves behind. */
export function readSecret(source: string, key: string, file: string): string {
  const text = readNamed(source, key, file).replace(/\r?\n$/, '')
  if (text === '') throw new FloeError('CONFIG_INVALID', `${source}: ${key}: ${file} is empty`)
  return text
}

export function resolveKafka(raw: RawKafkaConfig, source: string): KafkaConfig {
  const { ssl, sasl, ...rest } = raw
  const pem = (key: string, file: string | undefined, given: string | undefined) =>
    file === undefined ? given : readNamed(source, `kafka.ssl.${key}`, file)
  const tls: boolean | KafkaTlsSettings =
    typeof ssl === 'boolean'
      ? ssl
      : {
          ...optional('ca', pem('caFile', ssl.caFile, ssl.caPem)),
          ...optional('cert', pem('certFile', ssl.certFile, ssl.certPem)),
          ...optional('key', pem('keyFile', ssl.keyFile, ssl.keyPem)),
          verifyHostname: ssl.verifyHostname,
        }
  return { ...rest, ssl: tls, ...(sasl ? { sasl: resolveSasl(sasl, source) } : {}) }
}

function optional<K extends string>(key: K, value: string | undefined): { [key in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [key in K]?: string }
}

function resolveSasl(sasl: NonNullable<RawKafkaConfig['sasl']>, source: string): KafkaSaslSettings {
  if (sasl.mechanism === 'oauthbearer') {
    const { clientSecretFile, clientSecret, ...rest } = sasl
    return {
      ...rest,
      clientSecret:
        clientSecretFile === undefined
          ? (clientSecret as string)
          : readSecret(source, 'kafka.sasl.clientSecretFile', clientSecretFile),
    }
  }
  const { passwordFile, password, ...rest } = sasl
  return {
    ...rest,
    password:
      passwordFile === undefined ? (password as string) : readSecret(source, 'kafka.sasl.passwordFile', passwordFile),
  }
}

// The local broker's SASL_SSL listener (`stack up --kafka-security sasl_ssl`): certificates made
// with the JDK's keytool (a CA, a broker certificate for 127.0.0.1 and localhost, a client
// certificate, and a second CA that signed nothing, for tests of a wrong trust anchor), the
// listener's broker properties, and the SCRAM users written at format time. The PLAINTEXT listener
// stays beside it for the stack's own probes and the tests that do not test security.
// Internal to integration/stack.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { javaCommand } from './jars.ts'
import { type KafkaSecureEndpoints, paths, stackSources } from './layout.ts'

/** The store password of the stack's throwaway keystores: they guard nothing but test certificates. */
const storePassword = 'floe-stack'
const days = '3650'

function keytool(args: string[]): void {
  const bin = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'keytool') : 'keytool'
  // keytool narrates every step on stderr: kept out of the stack's output, in the error on a failure.
  execFileSync(bin, [...args, '-storepass', storePassword, '-noprompt'], { stdio: ['ignore', 'ignore', 'pipe'] })
}

function keyPair(store: string, alias: string, dname: string, extra: string[] = []): void {
  const args = ['-genkeypair', '-alias', alias, '-dname', dname, '-keyalg', 'RSA', '-keysize', '2048']
  keytool([...args, '-validity', days, '-storetype', 'PKCS12', '-keystore', store, ...extra])
}

/** A key pair in `store` signed by the CA in `caStore`, with the CA's certificate beside it. */
function signedKeyPair(dir: string, caStore: string, name: string, dname: string, san?: string): void {
  const store = join(dir, `${name}.p12`)
  keyPair(store, name, dname)
  const request = join(dir, `${name}.csr`)
  keytool(['-certreq', '-alias', name, '-keystore', store, '-file', request])
  const signed = ['-gencert', '-alias', 'ca', '-keystore', caStore, '-infile', request, '-outfile']
  keytool([...signed, join(dir, `${name}.pem`), '-rfc', '-validity', days, ...(san ? ['-ext', `SAN=${san}`] : [])])
  keytool(['-importcert', '-alias', 'ca', '-file', join(dir, 'ca.pem'), '-keystore', store])
  keytool(['-importcert', '-alias', name, '-file', join(dir, `${name}.pem`), '-keystore', store])
  rmSync(request)
}

/**
 * The certificates of the secure listener, made once per stack folder: keytool cannot write a
 * private key as PEM, so a few lines of Java run from source (the JDK's launcher) export the
 * client's key for Node's TLS.
 */
export function makeCertificates(stackDir: string): string {
  const dir = paths(stackDir).tls
  if (existsSync(join(dir, 'client.key'))) return dir
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const ca of ['ca', 'other-ca']) {
    const store = join(dir, `${ca}.p12`)
    keyPair(store, 'ca', `CN=floe stack ${ca}`, ['-ext', 'bc:c'])
    keytool(['-exportcert', '-rfc', '-alias', 'ca', '-keystore', store, '-file', join(dir, `${ca}.pem`)])
  }
  const caStore = join(dir, 'ca.p12')
  signedKeyPair(dir, caStore, 'broker', 'CN=localhost', 'dns:localhost,ip:127.0.0.1')
  signedKeyPair(dir, caStore, 'client', 'CN=floe')
  // The broker trusts client certificates the stack's CA signed.
  keytool(['-importcert', '-alias', 'ca', '-file', join(dir, 'ca.pem'), '-keystore', join(dir, 'truststore.p12')])
  const pem = execFileSync(
    javaCommand(),
    [join(stackSources, 'kafka', 'PemKey.java'), join(dir, 'client.p12'), storePassword, 'client'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  writeFileSync(join(dir, 'client.key'), pem, { mode: 0o600 })
  return dir
}

/** Users and passwords of one stack start: PLAIN users live in the JAAS line, SCRAM ones in the metadata log. */
export function newCredentials(): KafkaSecureEndpoints['users'] {
  const password = () => randomBytes(12).toString('base64url')
  return {
    plain: { username: 'floe-plain', password: password() },
    scram: { username: 'floe-scram', password: password() },
  }
}

/** `kafka-storage format` arguments that create the SCRAM users (both hash sizes, one password). */
export function scramFormatArgs(users: KafkaSecureEndpoints['users']): string[] {
  const { username, password } = users.scram
  return ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((mechanism) => [
    '--add-scram',
    `${mechanism}=[name=${username},password=${password}]`,
  ])
}

/**
 * Broker properties of the SASL_SSL listener: PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER (Kafka's
 * unsecured-JWT validator: the stack has no identity provider, a test serves its own tokens),
 * client certificates required and checked against the stack's CA.
 */
export function secureListenerProperties(tlsDir: string, users: KafkaSecureEndpoints['users']): string {
  const plain = users.plain
  return `sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${plain.username}="${plain.password}";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.ssl.client.auth=required
ssl.keystore.type=PKCS12
ssl.keystore.location=${join(tlsDir, 'broker.p12')}
ssl.keystore.password=${storePassword}
ssl.key.password=${storePassword}
ssl.truststore.type=PKCS12
ssl.truststore.location=${join(tlsDir, 'truststore.p12')}
ssl.truststore.password=${storePassword}
`
}

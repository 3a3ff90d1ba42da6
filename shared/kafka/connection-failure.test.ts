import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { AuthenticationError, MultipleErrors, NetworkError } from '@platformatic/kafka'
import { FloeError } from '../errors.ts'
import { kafkaConnectionFailureOf } from './connection-failure.ts'

function socketError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code })
}

/** As the client library reports a broker it could not use: a list of per-broker failures. */
function noBroker(cause: Error): Error {
  return new MultipleErrors('Cannot connect to any broker.', [
    new NetworkError('Connection to 127.0.0.1:9093 failed.', { cause }),
  ])
}

describe('why a Kafka connection failed', () => {
  const cases: [string, Error, string | undefined, string | undefined][] = [
    [
      'a refused SASL authentication',
      noBroker(new AuthenticationError('SASL authentication failed.')),
      'KAFKA_AUTHENTICATION_FAILED',
      'authentication failed: SASL authentication failed',
    ],
    [
      'an untrusted broker certificate',
      noBroker(socketError('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain')),
      'KAFKA_TLS_FAILED',
      'TLS handshake failed: self-signed certificate in certificate chain',
    ],
    [
      'a certificate for another host',
      noBroker(socketError('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames")),
      'KAFKA_TLS_FAILED',
      "TLS handshake failed: Hostname/IP does not match certificate's altnames",
    ],
    [
      'a client certificate the broker refused',
      noBroker(
        socketError(
          'ERR_SSL_SSL/TLS_ALERT_BAD_CERTIFICATE',
          'C0:error:0A000412:SSL routines:ssl3_read_bytes:ssl/tls alert bad certificate:../rec_layer_s3.c:918:',
        ),
      ),
      'KAFKA_TLS_FAILED',
      'TLS handshake failed: ssl/tls alert bad certificate (the broker refused the handshake: does it require a client certificate?)',
    ],
    [
      'no broker listening',
      noBroker(socketError('ECONNREFUSED', 'connect ECONNREFUSED')),
      'KAFKA_UNAVAILABLE',
      'connection refused',
    ],
    [
      'a token endpoint that refused the client',
      noBroker(
        new AuthenticationError('The SASL/OAUTHBEARER token provider threw an error.', {
          cause: new FloeError('KAFKA_AUTHENTICATION_FAILED', 'token endpoint http://idp/token answered 401', {
            details: { tokenEndpoint: 'http://idp/token' },
          }),
        }),
      ),
      'KAFKA_AUTHENTICATION_FAILED',
      'authentication failed: token endpoint http://idp/token answered 401',
    ],
    ['something else', new Error('no answer within 10 s'), undefined, undefined],
  ]
  for (const [what, error, code, reason] of cases) {
    test(`${what} is ${code ?? 'none of the three'}`, () => {
      const failure = kafkaConnectionFailureOf(error)
      assert.equal(failure?.code, code)
      assert.equal(failure?.reason, reason)
    })
  }
})

// The worker's HTTP endpoints on metrics.port: /metrics (Prometheus text), /livez (the process
// answers), /readyz (the worker says it is ready: consuming, or deliberately idle). Plain
// node:http: three routes need no framework.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

export interface Endpoints {
  server: Server
  port: number
  close(): Promise<void>
}

export async function serveEndpoints(options: {
  port: number
  host?: string
  /** A registry, or what merges several (a worker's members on threads) */
  registry: Pick<Registry, 'metrics' | 'contentType'>
  ready: () => { ready: boolean; reason?: string }
}): Promise<Endpoints> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405).end()
      return
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500).end(String(error)),
      )
    } else if (path === '/livez') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n')
    } else if (path === '/readyz') {
      const { ready, reason } = options.ready()
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(`${ready ? 'ready' : `not ready: ${reason ?? ''}`}\n`)
    } else {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host ?? '0.0.0.0', () => resolve())
  })
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

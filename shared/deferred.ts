// A promise with its resolve and reject in hand, for a result that another callback delivers (a
// thread's message, an upload's end). Promise.withResolvers is ES2024, past the ES2023 lib this
// project compiles against.

export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (reason: unknown) => void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

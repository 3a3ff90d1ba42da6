// One Kafka partition's WAL work, one piece at a time in call order: the record loop's appends and
// the control machine's actors (sync, flush, acknowledge, revoke) all change the same
// PartitionIngest, and an append must never land between a sync's close of the old log and its
// start of the new one. PartitionLog serializes its own operations; this orders whole steps.
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(work, work)
    this.#tail = result.catch(() => {})
    return result
  }
}

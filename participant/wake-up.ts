// The record loop's idle wait: it ends after `ms`, or as soon as something changed (a machine
// started writing, backpressure lifted, the participant stops). A change while the loop was busy
// ends the next wait at once, so no change is slept through.
export class WakeUp {
  #wake: (() => void) | undefined
  #changedMeanwhile = false

  /** Waits `ms`, or less when `wake` is called meanwhile (or was since the last wait). */
  idle(ms: number): Promise<void> {
    if (this.#changedMeanwhile) {
      this.#changedMeanwhile = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      this.#wake = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  wake(): void {
    const wake = this.#wake
    this.#wake = undefined
    if (wake) wake()
    else this.#changedMeanwhile = true
  }
}

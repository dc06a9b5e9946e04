/**
 * Arrays a backend holds where its kernels read them (`Ops.pin`), by array: holding one that is
 * held already nests (counted), and the last release drops it. Each backend says what a hold is
 * (a copy in linear memory, a copy out of shared memory) and how it goes.
 */
export class Pins<P extends { readonly array: Float32Array }> {
  /** what is held now, oldest first */
  readonly held: P[] = [];
  private readonly count = new Map<P, number>();

  constructor(
    private readonly make: (array: Float32Array) => P,
    private readonly drop: (pin: P) => void = () => {},
  ) {}

  /** holds `array` until the returned function is called (calling it again does nothing) */
  hold(array: Float32Array): () => void {
    let pin = this.held.find((p) => p.array === array);
    if (!pin) {
      pin = this.make(array);
      this.held.push(pin);
    }
    const held = pin;
    this.count.set(held, (this.count.get(held) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count.get(held)! - 1;
      if (left > 0) {
        this.count.set(held, left);
        return;
      }
      this.count.delete(held);
      this.held.splice(this.held.indexOf(held), 1);
      this.drop(held);
    };
  }
}

// Memoisation, one way everywhere: a value computed once per key the caller names (keyOf), so
// what a cache is keyed by is written where it is made. Object keys (a graph, its index, a
// schedule: immutable, docs/ARCHITECTURE.md §9) are held weakly, an entry living as long as its
// key; text keys (a config's JSON) go in a least-recently-used cache of a fixed size.

/** `compute` cached per `keyOf(...args)`, an object held weakly; keyOf must capture every input. */
export function weakMemo<A extends readonly unknown[], K extends object, V>(
  keyOf: (...args: A) => K,
  compute: (...args: A) => V,
): (...args: A) => V {
  const cache = new WeakMap<K, V>();
  return (...args: A): V => {
    const key = keyOf(...args);
    if (cache.has(key)) return cache.get(key) as V;
    const value = compute(...args);
    cache.set(key, value);
    return value;
  };
}

/** At most `capacity` entries; a hit makes its entry the most recent, a miss past capacity evicts the least. */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>(); // least recently used first: a Map keeps insertion order

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`LruCache capacity must be an integer ≥ 1, got ${capacity}`);
    }
  }

  get size(): number {
    return this.map.size;
  }

  /** The keys, least recently used first. */
  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  /** The value under `key`, computed by `compute` on a miss. */
  getOrCompute(key: K, compute: () => V): V {
    if (this.map.has(key)) {
      const hit = this.map.get(key) as V;
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const value = compute();
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
    return value;
  }
}

/** `compute` cached per `keyOf(...args)` text, the `capacity` most recent kept; keyOf must capture every input. */
export function lruMemo<A extends readonly unknown[], V>(
  capacity: number,
  keyOf: (...args: A) => string,
  compute: (...args: A) => V,
): (...args: A) => V {
  const cache = new LruCache<string, V>(capacity);
  return (...args: A): V => cache.getOrCompute(keyOf(...args), () => compute(...args));
}

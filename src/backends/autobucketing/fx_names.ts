// torch.fx's _Namespace.create_name: how a node copied into a graph gets its name. Torch's
// pre-bucketing copies traced merge functions into the graph, and its logs (the overlapping map)
// name those nodes, so the port names them the same way.
// Upstream: torch/fx/graph.py (_Namespace).

const NAME = /^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$/;

// a merge asks for the same few candidates ('view_3', 'getitem') thousands of times: parse each once
const PARSED = new Map<string, { base: string; num: number | undefined } | null>();

function parse(name: string): { base: string; num: number | undefined } | null {
  const m = name.includes('.') ? null : NAME.exec(name); // most IR names have dots: NAME never matches them
  return m === null ? null : { base: m[1], num: m[2] === undefined ? undefined : Number.parseInt(m[2], 10) };
}

function parsedCandidate(candidate: string): { base: string; num: number | undefined } | null {
  let p = PARSED.get(candidate);
  if (p === undefined) {
    p = parse(candidate);
    if (PARSED.size < 4096) PARSED.set(candidate, p);
  }
  return p;
}

export class FxNamespace {
  private readonly used = new Set<string>();
  private readonly baseCount = new Map<string, number>();

  /**
   * A namespace holding a graph's names, as the graph's own construction left it. A name with a
   * dot is left out: `create` never makes one, and never checks a candidate that has one.
   */
  constructor(names: Iterable<string>) {
    for (const n of names) if (!n.includes('.')) this.take(n, parse(n));
  }

  /**
   * Takes the names among `names` this graph's own numbering had already reached: a forward graph
   * gave up the nodes its backward recomputes, but FX keeps an erased node's name taken.
   */
  reserveEarlier(names: Iterable<string>): void {
    for (const n of names) {
      const m = n.includes('.') ? null : NAME.exec(n);
      if (m === null || m[2] === undefined) continue;
      const reached = this.baseCount.get(m[1]);
      if (reached !== undefined && Number.parseInt(m[2], 10) <= reached) this.used.add(n);
    }
  }

  /** The name a node copied with candidate name `candidate` gets; it is then taken. */
  create(candidate: string): string {
    return this.take(candidate, parsedCandidate(candidate));
  }

  private take(candidate: string, m: { base: string; num: number | undefined } | null): string {
    if (m === null) {
      this.used.add(candidate);
      return candidate;
    }
    const base = m.base;
    let name = candidate;
    let num: number;
    if (m.num === undefined || this.used.has(candidate)) num = this.baseCount.get(base) ?? 0;
    else num = m.num;
    while (this.used.has(name)) {
      num += 1;
      name = `${base}_${num}`;
    }
    this.used.add(name);
    this.baseCount.set(base, num);
    return name;
  }
}

/** The FX name of an IR node: the importer marks a backward name the forward already used with `.bw`. */
export const fxNameOf = (irName: string): string => (irName.endsWith('.bw') ? irName.replace(/(\.bw)+$/, '') : irName);

// An FX dump as its JSON file holds it (snake_case, mutable), for tests that read, mangle or write
// dump files; src/graph/fx_schema.ts has the parsed form.

export interface RawFxNode {
  i: number;
  name: string;
  op: string;
  target: string;
  args: string[];
  shape?: number[];
  dtype?: string;
  multi?: number[][];
  est_ms?: number;
}

export interface RawFxDump {
  format: string;
  graph: string;
  source?: string;
  world_size: number;
  nodes: RawFxNode[];
}

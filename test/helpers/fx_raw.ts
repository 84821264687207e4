// An FX dump as its JSON file holds it (snake_case, mutable), for tests that read, mangle or write
// dump files; src/graph/fx_schema.ts has the parsed form. The optional fields are those of
// torch_pass dumps (estimates, kind) and of 2-D dumps (mesh, group fields).

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
  est_ms_size0?: number;
  size_bytes?: number;
  kind?: string;
  group_size?: number;
  group_name?: string;
  mesh_dim?: string;
  value_type?: string;
}

export interface RawFxDump {
  format: string;
  graph: string;
  source?: string;
  world_size: number;
  mesh?: Record<string, unknown>;
  group_names?: Record<string, string>;
  nodes: RawFxNode[];
}

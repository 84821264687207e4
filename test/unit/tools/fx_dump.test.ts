// The PyTorch-side FX exporter (tools/fx_dump/fsdp_sim_fx_dump.py), tested without torch: a
// Python driver builds fake torch-like graph modules, dump_graph_module writes them, and here
// the files go through importFxGraph and are compared field by field with torch's own fixture.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFxGraph, type GraphNode, type StepGraph } from '../../../src/graph';
import { readFxDump } from '../../../src/graph/fx_schema';
import { fixturePath, REPO_ROOT } from '../../helpers/fixtures';
import type { RawFxNode, RawFxDump } from '../../helpers/fx_raw';

const DRIVER = join(REPO_ROOT, 'test/unit/tools/fx_dump_driver.py');
const FIXTURE = fixturePath('fx/tiny_4layer_fw.json');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;

/** Runs the driver in one mode; fails loudly (not skips) when python3 is missing. */
function drive<T>(mode: string, outDir: string): T {
  const r = spawnSync('python3', [DRIVER, mode, outDir], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    timeout: 30_000,
  });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    throw new Error(
      `fx_dump test needs python3 on PATH to run ${DRIVER} (spawn failed: ${code ?? r.error.message}); install python3 ≥ 3.8`,
    );
  }
  if (r.status !== 0) throw new Error(`python3 ${DRIVER} ${mode} exited with ${r.status}:\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

function imported(x: unknown): StepGraph {
  const r = importFxGraph(x);
  if (!r.ok) throw r.error;
  return r.value;
}

const byName = (g: StepGraph, name: string): GraphNode => {
  const n = g.nodes.find((m) => m.name === name);
  if (!n) throw new Error(`no node '${name}' in the imported graph`);
  return n;
};

let out: string;
beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'fsdp-sim-fx-dump-'));
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('dump_graph_module', () => {
  it('writes a fake SimpleFSDP forward + backward that importFxGraph accepts, with collectives, waits and mm intact', () => {
    const res = drive<{ world_size: { fw: number; bw: number }; files: [string, string] }>('simple', out);
    expect(res.world_size).toEqual({ fw: 4, bw: 4 }); // inferred from the collectives' group-size arg
    const [fw, bw] = res.files.map((f) => readJson<RawFxDump>(f));
    expect(fw.format).toBe('fsdp-sim fx dump v1');
    expect([fw.graph, bw.graph]).toEqual(['forward', 'backward']);
    expect(fw.nodes.map((n) => n.i)).toEqual(fw.nodes.map((_, k) => k));

    const g = imported([fw, bw]);
    expect(g.meta.worldSize).toBe(4);
    const ag = byName(g, 'all_gather_into_tensor');
    expect(ag.kind).toBe('all_gather');
    expect(ag.collective).toMatchObject({
      kind: 'all_gather',
      groupSize: 4,
      dtype: 'bf16',
      inputBytes: 4 * 16 * 2,
      outputBytes: 16 * 16 * 2,
    });
    expect(ag.estMs).toBeCloseTo((16 * 16 * 2) / 1e6, 12); // the driver's estimator: 1 ms per MB out
    expect(ag.params).toEqual(['primals_1']); // traced back through the bf16 cast to the shard
    const agWait = byName(g, 'wait_tensor');
    expect(agWait.kind).toBe('wait');
    expect(agWait.waitOf).toBe('all_gather_into_tensor');
    expect(g.tensors[agWait.outputs[0]].shape).toEqual([16, 16]);

    const rs = byName(g, 'reduce_scatter_tensor');
    expect(rs.kind).toBe('reduce_scatter');
    expect(rs.phase).toBe('backward');
    expect(rs.collective).toMatchObject({
      kind: 'reduce_scatter',
      groupSize: 4,
      dtype: 'fp32',
      inputBytes: 16 * 16 * 4,
      outputBytes: 4 * 16 * 4,
    });
    expect(byName(g, 'wait_tensor_1').waitOf).toBe('reduce_scatter_tensor');
    expect(byName(g, 'wait_tensor_1').estMs).toBeUndefined(); // waits carry no estimate

    const mm = byName(g, 'mm');
    expect(mm.matmulLike).toBe(true);
    expect(mm.flops).toBe(2 * 8 * 16 * 16); // [8,16]·[16,16]
    expect(g.tensors[mm.outputs[0]].shape).toEqual([8, 16]);
    const mm1 = byName(g, 'mm_1');
    expect(mm1.flops).toBe(2 * 16 * 16 * 8); // [16,8]·[8,16]: reads the forward's primals_2 by name
    expect(mm1.inputs).toContain(mm.inputs.find((t) => g.tensors[t].shape.join() === '8,16'));
  });

  it('skips None and non-node args (dtype kwargs, group size and name) and writes no est_ms without torch', () => {
    const res = drive<{ default_est_file: string }>('simple', out);
    const d = readJson<RawFxDump>(res.default_est_file);
    expect(d.nodes.find((n) => n.name === 'output')?.args).toEqual(['mm', 'primals_2']);
    expect(d.nodes.find((n) => n.name === 'all_gather_into_tensor')?.args).toEqual(['_to_copy']);
    expect(d.nodes.some((n) => n.est_ms !== undefined)).toBe(false);
    expect(() => readFxDump(d)).not.toThrow();
  });

  it("reproduces torch's own fixture fields for torch-like versions of its nodes", () => {
    const res = drive<{ file: string }>('fixture', out);
    const mine = readJson<RawFxDump>(res.file);
    const ref = new Map(readJson<RawFxDump>(FIXTURE).nodes.map((n) => [n.name, n]));
    expect(mine.nodes.length).toBe(24);
    let prevI = -1;
    for (const n of mine.nodes) {
      const r = ref.get(n.name);
      expect(r, n.name).toBeDefined();
      if (!r) continue;
      expect(r.i, `${n.name} order`).toBeGreaterThan(prevI);
      prevI = r.i;
      const fields = (x: RawFxNode) => ({
        op: x.op,
        target: x.target,
        args: x.args,
        shape: x.shape,
        dtype: x.dtype,
        multi: x.multi,
      });
      expect(fields(n), n.name).toEqual(fields(r));
      expect(n.est_ms !== undefined, `${n.name} est_ms presence`).toBe(r.est_ms !== undefined);
    }
  });

  it('rejects a bad graph kind or world size, naming the field and valid set, and writes nothing', () => {
    const res = drive<{ messages: (string | null)[]; wrote: boolean }>('errors', out);
    expect(res.messages[0]).toMatch(/graph_kind must be one of \['forward', 'backward'\], got 'sideways'/);
    expect(res.messages[1]).toMatch(/world_size must be an integer in \[1, 65536\], got 0/);
    expect(res.messages[2]).toMatch(/world_size .* got True/);
    expect(res.wrote).toBe(false);
  });
});

describe('fx_dump_backend', () => {
  it('dumps forward and backward of each dynamo graph on rank 0 only, and runs the graphs unchanged', () => {
    const res = drive<{
      results: string[];
      aot_kwargs: string[];
      files: string[];
      files_all: string[];
      dir: string;
      dir_all: string;
    }>('backend', out);
    expect(res.results).toEqual(['ran fw with 2 inputs', 'ran bw with 1 inputs']); // boxed calls reach gm.forward
    expect(res.aot_kwargs).toEqual(['keep_inference_input_mutations']); // extra kwargs go to aot_autograd
    expect(res.files).toEqual(['graph_0_bw.json', 'graph_0_fw.json', 'graph_1_bw.json', 'graph_1_fw.json']); // rank 1's call wrote none
    expect(res.files_all).toEqual(['graph_0_rank1_bw.json', 'graph_0_rank1_fw.json']);
    const fw = readJson<RawFxDump>(join(res.dir, 'graph_0_fw.json'));
    const bw = readJson<RawFxDump>(join(res.dir, 'graph_0_bw.json'));
    expect([fw.graph, bw.graph, fw.world_size]).toEqual(['forward', 'backward', 4]);
    expect(fw.source).toMatch(/aot_autograd forward graph 0/);
    expect(readJson<RawFxDump>(join(res.dir_all, 'graph_0_rank1_fw.json')).source).toBe('mine');
    const g = imported([fw, bw]);
    expect(g.nodes.filter((n) => n.kind === 'all_gather' || n.kind === 'reduce_scatter').map((n) => n.name)).toEqual([
      'all_gather_into_tensor',
      'reduce_scatter_tensor',
    ]);
  });
});

describe('dump_pass_input', () => {
  it("writes the graph torch's pass schedules with the pass's own estimates and classes, which fsdp-sim then uses", () => {
    const res = drive<{ files: [string, string] }>('pass_input', out);
    const [fw, bw] = res.files.map((f) => readJson<RawFxDump>(f));
    expect([fw.graph, bw.graph]).toEqual(['forward', 'backward']); // backward: it has tangents
    const node = (d: typeof fw, name: string) => d.nodes.find((n) => n.name === name)!;
    expect(node(fw, 'all_gather_into_tensor')).toMatchObject({
      kind: 'collective',
      est_ms: 1.5,
      est_ms_size0: 0.01,
      size_bytes: 1280,
    });
    expect(node(fw, 'wait_tensor')).toMatchObject({ kind: 'wait' });
    expect(node(fw, 'mm')).toMatchObject({ kind: 'compute', est_ms: 0.25 });
    expect(node(fw, 't')).toMatchObject({ kind: 'view', est_ms: 0 });
    expect(node(fw, '_to_copy')).toMatchObject({ kind: 'view', est_ms: 0 }); // no estimate: hides nothing, as in torch
    for (const n of fw.nodes) if (n.op === 'call_function') expect(n.est_ms).toBeTypeOf('number');
    const g = imported([fw, bw]);
    expect(byName(g, 'mm').matmulLike).toBe(true);
    expect(byName(g, 'all_gather_into_tensor')).toMatchObject({ estMs: 1.5, estMsSize0: 0.01, sizeBytes: 1280 });
  });
});

describe('group fields of collectives', () => {
  const groupOf = (d: RawFxDump, name: string) => {
    const { group_size, group_name, mesh_dim } = d.nodes.find((n) => n.name === name) ?? ({} as RawFxNode);
    return { group_size, group_name, mesh_dim };
  };

  it("writes each collective's group size, name and mesh dim on a 2-D mesh, as the importer reads them", () => {
    const res = drive<{ found_root: boolean; files: Record<string, string>; error: string; wrote: boolean }>(
      'mesh',
      out,
    );
    expect(res.found_root).toBe(true); // a DTensor's tp sub-mesh gives its (dp_shard, tp) root
    const d = readJson<RawFxDump>(res.files['2d']);
    expect(d.mesh).toEqual({ dp_shard: 2, tp: 2, mesh_dim_names: ['dp_shard', 'tp'] }); // its cp of 1 left out
    // '9' holds dp_shard's ranks under another name (a flattened mesh): it is dp_shard
    expect(d.group_names).toEqual({ '1': 'dp_shard', '3': 'tp', '9': 'dp_shard' });
    expect(groupOf(d, 'all_gather_into_tensor')).toEqual({ group_size: 2, group_name: '1', mesh_dim: 'dp_shard' });
    expect(groupOf(d, 'all_gather_into_tensor_1')).toEqual({ group_size: 2, group_name: '9', mesh_dim: 'dp_shard' });
    // all_reduce has no size argument: its size comes from the process group
    expect(groupOf(d, 'all_reduce')).toEqual({ group_size: 2, group_name: '3', mesh_dim: 'tp' });
    expect(d.nodes.find((n) => n.name === 'primals_3')?.value_type).toBe('SimpleNamespace');
    const g = imported(d);
    expect(g.meta).toMatchObject({ worldSize: 4, mesh: { dpReplicate: 1, dpShard: 2, tp: 2 } });
    const ag = byName(g, 'all_gather_into_tensor');
    expect(ag.collective).toMatchObject({ group: 'dp_shard', groupSize: 2, groupStride: 2 });
    expect(byName(g, 'all_reduce').collective).toMatchObject({ kind: 'all_reduce', group: 'tp', groupSize: 2 });
    // without a resolver the all_reduce names only its mesh dim, and the importer sizes it from the mesh
    expect(byName(g, 'all_gather_into_tensor_1').collective).toMatchObject({ group: 'dp_shard', groupSize: 2 });
    const bare = readJson<RawFxDump>(res.files['2d_no_resolver']);
    expect(groupOf(bare, 'all_reduce')).toEqual({ group_size: undefined, group_name: '3', mesh_dim: 'tp' });
    expect(byName(imported(bare), 'all_reduce').collective).toMatchObject({ group: 'tp', groupSize: 2 });
    expect(res.error).toMatch(/world_size 8 differs from the mesh's size 4/);
    expect(res.wrote).toBe(false);
  });

  it('writes a 1-D mesh, or none, as a plain FSDP dump: group sizes only', () => {
    const res = drive<{ files: Record<string, string> }>('mesh', out);
    const one = readJson<RawFxDump>(res.files['1d']);
    expect(one.mesh).toBeUndefined();
    expect(one.group_names).toBeUndefined();
    expect(groupOf(one, 'all_reduce')).toEqual({ group_size: 4, group_name: undefined, mesh_dim: undefined });
    const none = readJson<RawFxDump>(res.files.none);
    const ag = groupOf(none, 'all_gather_into_tensor');
    expect(ag).toEqual({ group_size: 2, group_name: undefined, mesh_dim: undefined });
    expect(groupOf(none, 'all_reduce').group_size).toBeUndefined();
  });
});

// Elementwise add c = a + b; the spec is src/runtime/cpu/add.ts. With p.copy = 1, c = a (the
// 'copy' op: a layout copy, bound with b = a so that it needs no pipeline of its own).

struct Params { n: u32, copy: u32, _p1: u32, _p2: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) nwg: vec3u) {
  let i = (wid.y * nwg.x + wid.x) * WG + lid.x;
  if (i >= p.n) { return; }
  c[i] = select(a[i] + b[i], a[i], p.copy != 0u);
}

// SwiGLU gate and its backward; the spec is src/runtime/cpu/swiglu.ts.
// g = silu(a)·b;  da = dg·b·σ(a)·(1 + a·(1−σ(a))),  db = dg·silu(a).

struct Params { n: u32, _p0: u32, _p1: u32, _p2: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> g: array<f32>; // fwd out
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> dg: array<f32>; // bwd in
@group(0) @binding(5) var<storage, read_write> da: array<f32>; // bwd out
@group(0) @binding(6) var<storage, read_write> db: array<f32>; // bwd out

override WG: u32 = 64;

fn sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + exp(-x)); }

fn flat(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.n) { return; }
  g[i] = a[i] * sigmoid(a[i]) * b[i];
}

@compute @workgroup_size(WG)
fn bwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.n) { return; }
  let s = sigmoid(a[i]);
  da[i] = dg[i] * b[i] * s * (1.0 + a[i] * (1.0 - s));
  db[i] = dg[i] * a[i] * s;
}

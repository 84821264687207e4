// Grouped GEMM, naive (one thread per output element); the spec is src/runtime/cpu/grouped_matmul.ts.
// Expert e owns rows [offsets[e], offsets[e+1]) of x; w is [E, K, N] row-major.
// fwd:   y[r, n]  = Σ_k x[r, k]·w[e(r), k, n]
// bwd_x: dx[r, k] = Σ_n dy[r, n]·w[e(r), k, n]
// bwd_w: dw[e, k, n] = Σ_{r in e} x[r, k]·dy[r, n], r ascending (zero for an expert with no rows)

struct Params { rows: u32, E: u32, K: u32, N: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>; // fwd, bwd_w: [rows, K]
@group(0) @binding(1) var<storage, read> w: array<f32>; // fwd, bwd_x: [E, K, N]
@group(0) @binding(2) var<storage, read> offsets: array<i32>; // [E + 1]
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // fwd: y; bwd_x: dx; bwd_w: dw
@group(0) @binding(5) var<storage, read> dy: array<f32>; // bwd_x, bwd_w: [rows, N]

override WG: u32 = 64;

fn flat(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

/** The expert whose range holds row r: the last e with offsets[e] ≤ r (empty experts skipped). */
fn expertOf(r: u32) -> u32 {
  var e = 0u;
  while (e + 1u < p.E && u32(offsets[e + 1u]) <= r) { e++; }
  return e;
}

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.N) { return; }
  let r = i / p.N;
  let n = i % p.N;
  let we = expertOf(r) * p.K * p.N;
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) { acc += x[r * p.K + k] * w[we + k * p.N + n]; }
  out[i] = acc;
}

@compute @workgroup_size(WG)
fn bwd_x(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
         @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.K) { return; }
  let r = i / p.K;
  let k = i % p.K;
  let we = expertOf(r) * p.K * p.N;
  var acc = 0.0;
  for (var n = 0u; n < p.N; n++) { acc += dy[r * p.N + n] * w[we + k * p.N + n]; }
  out[i] = acc;
}

@compute @workgroup_size(WG)
fn bwd_w(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
         @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.E * p.K * p.N) { return; }
  let e = i / (p.K * p.N);
  let k = (i / p.N) % p.K;
  let n = i % p.N;
  var acc = 0.0;
  for (var r = u32(offsets[e]); r < u32(offsets[e + 1u]); r++) { acc += x[r * p.K + k] * dy[r * p.N + n]; }
  out[i] = acc;
}

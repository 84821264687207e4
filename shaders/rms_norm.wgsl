// RMSNorm over the last dim, forward and backward; the spec is src/runtime/cpu/rms_norm.ts.
// fwd:    one workgroup per row; Σx² by a fixed-shape tree reduction in workgroup memory.
// bwd_dx: one workgroup per row; reduces Σ dy·w·x, then dx = rstd·(dy·w − x·rstd²·mean(dy·w·x)).
// bwd_dw: one thread per column summing dy·x·rstd over rows in order (deterministic, no atomics).
// WG must be a power of two (the tree halves it).

struct Params { rows: u32, cols: u32, eps: f32, _pad: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>; // fwd out
@group(0) @binding(3) var<storage, read_write> rstd: array<f32>; // fwd out, bwd in
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read> dy: array<f32>; // bwd in
@group(0) @binding(6) var<storage, read_write> dx: array<f32>; // bwd out
@group(0) @binding(7) var<storage, read_write> dw: array<f32>; // bwd out

override WG: u32 = 64;

var<workgroup> red: array<f32, WG>;

/** Tree-sums `v` over the workgroup; every thread gets the total. Call in uniform control flow. */
fn workgroup_sum(v: f32, l: u32) -> f32 {
  red[l] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (l < s) { red[l] += red[l + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier(); // red is reused by the next call
  return total;
}

fn row_of(wid: vec3u, nwg: vec3u) -> u32 { return wid.y * nwg.x + wid.x; }

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let r = row_of(wid, nwg);
  let live = r < p.rows; // the whole workgroup agrees, so barriers stay uniform
  let base = r * p.cols;
  var ss = 0.0;
  if (live) {
    for (var c = lid.x; c < p.cols; c += WG) { ss += x[base + c] * x[base + c]; }
  }
  let total = workgroup_sum(ss, lid.x);
  if (!live) { return; }
  let rs = inverseSqrt(total / f32(p.cols) + p.eps);
  if (lid.x == 0u) { rstd[r] = rs; }
  for (var c = lid.x; c < p.cols; c += WG) { y[base + c] = x[base + c] * rs * w[c]; }
}

@compute @workgroup_size(WG)
fn bwd_dx(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
          @builtin(num_workgroups) nwg: vec3u) {
  let r = row_of(wid, nwg);
  let live = r < p.rows;
  let base = r * p.cols;
  var gx = 0.0;
  if (live) {
    for (var c = lid.x; c < p.cols; c += WG) { gx += dy[base + c] * w[c] * x[base + c]; }
  }
  let total = workgroup_sum(gx, lid.x);
  if (!live) { return; }
  let rs = rstd[r];
  let k = rs * rs * total / f32(p.cols);
  for (var c = lid.x; c < p.cols; c += WG) { dx[base + c] = rs * (dy[base + c] * w[c] - x[base + c] * k); }
}

@compute @workgroup_size(WG)
fn bwd_dw(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
          @builtin(num_workgroups) nwg: vec3u) {
  let c = row_of(wid, nwg) * WG + lid.x;
  if (c >= p.cols) { return; }
  var acc = 0.0;
  for (var r = 0u; r < p.rows; r++) { acc += dy[r * p.cols + c] * x[r * p.cols + c] * rstd[r]; }
  dw[c] = acc;
}

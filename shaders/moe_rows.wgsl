// MoE row movement; the spec is src/runtime/cpu/moe_rows.ts. posOf[t·K + i] is the expert row of
// token t's i-th pick; every sum runs over i ascending, one thread per output element, so there
// are no float atomics and the order never depends on scheduling.
// gather:          dst[r, j] = src[index[r], j]                      (rows = P)
// scatter_add:     dst[t, j] = Σ_i src[posOf[t, i], j]               (rows = T; gather's backward)
// combine:         dst[t, j] = Σ_i w[t, i]·src[posOf[t, i], j]       (rows = T)
// combine_bwd_src: dSrc[posOf[a], j] = w[a]·dDst[a / K, j]          (a < T·K)
// combine_bwd_w:   dW[a] = Σ_j dDst[a / K, j]·src[posOf[a], j]

struct Params { rows: u32, cols: u32, K: u32, _p0: u32 }

@group(0) @binding(0) var<storage, read> src: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<i32>; // gather: index [P]; the others: posOf [T·K]
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> w: array<f32>; // combine*: gates [T·K]
@group(0) @binding(5) var<storage, read> dDst: array<f32>; // combine_bwd*: [T, cols]
@group(0) @binding(6) var<storage, read_write> dSrc: array<f32>; // combine_bwd_src out
@group(0) @binding(7) var<storage, read_write> dW: array<f32>; // combine_bwd_w out

override WG: u32 = 64;

fn flat(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

@compute @workgroup_size(WG)
fn gather(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
          @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.cols) { return; }
  dst[i] = src[u32(index[i / p.cols]) * p.cols + i % p.cols];
}

@compute @workgroup_size(WG)
fn scatter_add(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
               @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.cols) { return; }
  let t = i / p.cols;
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) { acc += src[u32(index[t * p.K + k]) * p.cols + i % p.cols]; }
  dst[i] = acc;
}

@compute @workgroup_size(WG)
fn combine(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
           @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.cols) { return; }
  let t = i / p.cols;
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    let a = t * p.K + k;
    acc += w[a] * src[u32(index[a]) * p.cols + i % p.cols];
  }
  dst[i] = acc;
}

@compute @workgroup_size(WG)
fn combine_bwd_src(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
                   @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.rows * p.K * p.cols) { return; }
  let a = i / p.cols;
  let j = i % p.cols;
  dSrc[u32(index[a]) * p.cols + j] = w[a] * dDst[(a / p.K) * p.cols + j];
}

@compute @workgroup_size(WG)
fn combine_bwd_w(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
                 @builtin(num_workgroups) nwg: vec3u) {
  let a = flat(lid, wid, nwg);
  if (a >= p.rows * p.K) { return; }
  let t = a / p.K;
  let row = u32(index[a]) * p.cols;
  var dot = 0.0;
  for (var j = 0u; j < p.cols; j++) { dot += dDst[t * p.cols + j] * src[row + j]; }
  dW[a] = dot;
}

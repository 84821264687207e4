// Cross-entropy loss (mean over T tokens) and its backward; the spec is
// src/runtime/cpu/cross_entropy.ts. Deterministic: per-row losses land in a scratch buffer,
// then one workgroup sums them with a fixed tree (no float atomics).
// rows:      one workgroup per token row; max and Σexp by tree reductions → rowLoss[t].
// mean:      one workgroup; loss[0] = Σ rowLoss / T.
// bwd:       one workgroup per row; dLogits = (softmax − onehot)/T.
// WG must be a power of two.

struct Params { T: u32, V: u32, _p0: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read> logits: array<f32>; // [T,V]
@group(0) @binding(1) var<storage, read> targets: array<i32>; // [T]
@group(0) @binding(2) var<storage, read_write> rowLoss: array<f32>; // scratch [T]
@group(0) @binding(3) var<storage, read_write> loss: array<f32>; // [1]
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read_write> dLogits: array<f32>; // [T,V]

override WG: u32 = 64;

var<workgroup> red: array<f32, WG>;

fn workgroup_max(v: f32, l: u32) -> f32 {
  red[l] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (l < s) { red[l] = max(red[l], red[l + s]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn workgroup_sum(v: f32, l: u32) -> f32 {
  red[l] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (l < s) { red[l] += red[l + s]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

/** logsumexp of row t (max-shifted); call in uniform control flow. */
fn row_lse(t: u32, live: bool, l: u32) -> f32 {
  let base = t * p.V;
  var mx = -3.0e38;
  if (live) { for (var v = l; v < p.V; v += WG) { mx = max(mx, logits[base + v]); } }
  let m = workgroup_max(mx, l);
  var s = 0.0;
  if (live) { for (var v = l; v < p.V; v += WG) { s += exp(logits[base + v] - m); } }
  return m + log(workgroup_sum(s, l));
}

@compute @workgroup_size(WG)
fn rows(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) nwg: vec3u) {
  let t = wid.y * nwg.x + wid.x;
  let live = t < p.T;
  let lse = row_lse(t, live, lid.x);
  if (live && lid.x == 0u) {
    let y = u32(clamp(targets[t], 0, i32(p.V) - 1));
    rowLoss[t] = lse - logits[t * p.V + y];
  }
}

@compute @workgroup_size(WG)
fn mean(@builtin(local_invocation_id) lid: vec3u) {
  var s = 0.0;
  for (var t = lid.x; t < p.T; t += WG) { s += rowLoss[t]; }
  let total = workgroup_sum(s, lid.x);
  if (lid.x == 0u) { loss[0] = total / f32(p.T); }
}

@compute @workgroup_size(WG)
fn bwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let t = wid.y * nwg.x + wid.x;
  let live = t < p.T;
  let lse = row_lse(t, live, lid.x);
  if (!live) { return; }
  let y = u32(targets[t]);
  let invT = 1.0 / f32(p.T);
  for (var v = lid.x; v < p.V; v += WG) {
    var g = exp(logits[t * p.V + v] - lse);
    if (v == y) { g -= 1.0; }
    dLogits[t * p.V + v] = g * invT;
  }
}

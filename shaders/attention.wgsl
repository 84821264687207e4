// Causal self-attention forward and backward (small seq); the spec is
// src/runtime/cpu/attention.ts. Layouts: q/o/dO [B·S, H·hd], k/v [B·S, KVH·hd],
// lse/D [(b·H + h)·S + i]; GQA head h reads kv head floor(h·KVH/H); scale 1/sqrt(hd).
// fwd:     one workgroup per (b, h, query i): scores for j ≤ i into workgroup memory, tree max
//          and Σexp, then one thread per output dim. Saves lse = max + log Σexp.
// bwd_d:   one thread per (b, h, i): D_i = dO_i·o_i.
// bwd_dq:  one workgroup per (b, h, i): dS_ij = P_ij (dO_i·v_j − D_i), dq_i = scale Σ_j dS_ij k_j.
// bwd_dkv: one workgroup per (b, kv head g, key j): loops heads h→g and queries i ≥ j in order,
//          accumulating dk_j, dv_j in workgroup memory (deterministic, no atomics).
// Limits: seq ≤ MAX_SEQ, headDim ≤ MAX_HD (checked on the host). WG must be a power of two.
// Small shapes (p.small = 1: seq and headDim ≤ SMALL, the host decides): fwd, bwd_dq and bwd_dkv run
// one THREAD per row instead of one workgroup, sequentially in registers, with no barrier and no
// workgroup memory. A workgroup per row of 32 keys idles most of its threads, and on CPU-backed
// adapters (lavapipe, SwiftShader) every barrier and the zero-fill of the workgroup arrays cost
// more than the math. Same formulas, same summation order per output as the CPU reference.

const SMALL: u32 = 64u;

struct Params { batch: u32, seq: u32, heads: u32, kvHeads: u32, hd: u32, scale: f32, small: u32, _p1: u32 }

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> o: array<f32>; // fwd out, bwd in
@group(0) @binding(4) var<storage, read_write> lse: array<f32>; // fwd out, bwd in
@group(0) @binding(5) var<uniform> p: Params;
@group(0) @binding(6) var<storage, read> dO: array<f32>;
@group(0) @binding(7) var<storage, read_write> Dd: array<f32>; // bwd scratch: D_i
@group(0) @binding(8) var<storage, read_write> dq: array<f32>;
@group(0) @binding(9) var<storage, read_write> dk: array<f32>;
@group(0) @binding(10) var<storage, read_write> dv: array<f32>;

override WG: u32 = 64;
override MAX_SEQ: u32 = 1024;
override MAX_HD: u32 = 256;

var<workgroup> red: array<f32, WG>;
var<workgroup> s: array<f32, MAX_SEQ>; // scores / P / dS per key or query
var<workgroup> s2: array<f32, MAX_SEQ>;
var<workgroup> accK: array<f32, MAX_HD>;
var<workgroup> accV: array<f32, MAX_HD>;

fn workgroup_max(x: f32, l: u32) -> f32 {
  red[l] = x;
  workgroupBarrier();
  for (var st = WG / 2u; st > 0u; st >>= 1u) {
    if (l < st) { red[l] = max(red[l], red[l + st]); }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn workgroup_sum(x: f32, l: u32) -> f32 {
  red[l] = x;
  workgroupBarrier();
  for (var st = WG / 2u; st > 0u; st >>= 1u) {
    if (l < st) { red[l] += red[l + st]; }
    workgroupBarrier();
  }
  let r = red[0];
  workgroupBarrier();
  return r;
}

fn q_off(b: u32, i: u32, h: u32) -> u32 { return (b * p.seq + i) * p.heads * p.hd + h * p.hd; }
fn kv_off(b: u32, j: u32, g: u32) -> u32 { return (b * p.seq + j) * p.kvHeads * p.hd + g * p.hd; }
fn kv_head(h: u32) -> u32 { return (h * p.kvHeads) / p.heads; }

fn dot_qk(qo: u32, ko: u32) -> f32 {
  var acc = 0.0;
  for (var t = 0u; t < p.hd; t++) { acc += q[qo + t] * k[ko + t]; }
  return acc;
}

fn dot_dov(qo: u32, ko: u32) -> f32 {
  var acc = 0.0;
  for (var t = 0u; t < p.hd; t++) { acc += dO[qo + t] * v[ko + t]; }
  return acc;
}

/** Thread-per-row index for the small path: (wid, lid) → r, as bwd_d counts rows. */
fn row_of(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

/** (b, h, i) of query row r = (b·H + h)·S + i. */
fn query_row(r: u32) -> vec3u { return vec3u(r / (p.seq * p.heads), (r / p.seq) % p.heads, r % p.seq); }

/** Small fwd: row r's scores in registers; lse = max + log Σexp; o = Σ_j P_ij v_j in key order. */
fn fwd_row(r: u32) {
  let bhi = query_row(r);
  let b = bhi.x; let h = bhi.y; let i = bhi.z;
  let g = kv_head(h);
  let qo = q_off(b, i, h);
  var sc: array<f32, SMALL>;
  var mx = -3.0e38;
  for (var j = 0u; j <= i; j++) {
    sc[j] = p.scale * dot_qk(qo, kv_off(b, j, g));
    mx = max(mx, sc[j]);
  }
  var se = 0.0;
  for (var j = 0u; j <= i; j++) { se += exp(sc[j] - mx); }
  let l = mx + log(se);
  lse[r] = l;
  for (var j = 0u; j <= i; j++) { sc[j] = exp(sc[j] - l); }
  for (var t = 0u; t < p.hd; t++) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) { acc += sc[j] * v[kv_off(b, j, g) + t]; }
    o[qo + t] = acc;
  }
}

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  if (p.small == 1u) { // uniform: the whole dispatch takes one path
    let rs = row_of(lid, wid, nwg);
    if (rs < p.batch * p.heads * p.seq) { fwd_row(rs); }
    return;
  }
  let r = wid.y * nwg.x + wid.x; // (b·H + h)·S + i
  let live = r < p.batch * p.heads * p.seq;
  let i = r % p.seq;
  let h = (r / p.seq) % p.heads;
  let b = r / (p.seq * p.heads);
  let g = kv_head(h);
  let qo = q_off(b, i, h);
  var mx = -3.0e38;
  if (live) {
    for (var j = lid.x; j <= i; j += WG) {
      let sc = p.scale * dot_qk(qo, kv_off(b, j, g));
      s[j] = sc;
      mx = max(mx, sc);
    }
  }
  let m = workgroup_max(mx, lid.x);
  var se = 0.0;
  if (live) { for (var j = lid.x; j <= i; j += WG) { se += exp(s[j] - m); } }
  let l = m + log(workgroup_sum(se, lid.x));
  if (live) { for (var j = lid.x; j <= i; j += WG) { s[j] = exp(s[j] - l); } }
  workgroupBarrier();
  if (!live) { return; }
  if (lid.x == 0u) { lse[r] = l; }
  for (var t = lid.x; t < p.hd; t += WG) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) { acc += s[j] * v[kv_off(b, j, g) + t]; }
    o[qo + t] = acc;
  }
}

@compute @workgroup_size(WG)
fn bwd_d(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
         @builtin(num_workgroups) nwg: vec3u) {
  let r = (wid.y * nwg.x + wid.x) * WG + lid.x;
  if (r >= p.batch * p.heads * p.seq) { return; }
  let i = r % p.seq;
  let h = (r / p.seq) % p.heads;
  let b = r / (p.seq * p.heads);
  let qo = q_off(b, i, h);
  var acc = 0.0;
  for (var t = 0u; t < p.hd; t++) { acc += dO[qo + t] * o[qo + t]; }
  Dd[r] = acc;
}

/** Small bwd_dq: dS_ij in registers, dq_i = scale Σ_j dS_ij k_j in key order. */
fn dq_row(r: u32) {
  let bhi = query_row(r);
  let b = bhi.x; let h = bhi.y; let i = bhi.z;
  let g = kv_head(h);
  let qo = q_off(b, i, h);
  var ds: array<f32, SMALL>;
  for (var j = 0u; j <= i; j++) {
    let ko = kv_off(b, j, g);
    ds[j] = exp(p.scale * dot_qk(qo, ko) - lse[r]) * (dot_dov(qo, ko) - Dd[r]);
  }
  for (var t = 0u; t < p.hd; t++) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) { acc += ds[j] * k[kv_off(b, j, g) + t]; }
    dq[qo + t] = p.scale * acc;
  }
}

@compute @workgroup_size(WG)
fn bwd_dq(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
          @builtin(num_workgroups) nwg: vec3u) {
  if (p.small == 1u) {
    let rs = row_of(lid, wid, nwg);
    if (rs < p.batch * p.heads * p.seq) { dq_row(rs); }
    return;
  }
  let r = wid.y * nwg.x + wid.x;
  if (r >= p.batch * p.heads * p.seq) { return; } // uniform per workgroup
  let i = r % p.seq;
  let h = (r / p.seq) % p.heads;
  let b = r / (p.seq * p.heads);
  let g = kv_head(h);
  let qo = q_off(b, i, h);
  let l = lse[r];
  let Di = Dd[r];
  for (var j = lid.x; j <= i; j += WG) {
    let ko = kv_off(b, j, g);
    let pr = exp(p.scale * dot_qk(qo, ko) - l);
    s[j] = pr * (dot_dov(qo, ko) - Di);
  }
  workgroupBarrier();
  for (var t = lid.x; t < p.hd; t += WG) {
    var acc = 0.0;
    for (var j = 0u; j <= i; j++) { acc += s[j] * k[kv_off(b, j, g) + t]; }
    dq[qo + t] = p.scale * acc;
  }
}

/** Small bwd_dkv: key j's dk, dv accumulated in registers over heads h→g, then queries i ≥ j, in order. */
fn dkv_row(r: u32) {
  let j = r % p.seq;
  let g = (r / p.seq) % p.kvHeads;
  let b = r / (p.seq * p.kvHeads);
  let ko = kv_off(b, j, g);
  var ak: array<f32, SMALL>;
  var av: array<f32, SMALL>;
  for (var h = 0u; h < p.heads; h++) {
    if (kv_head(h) != g) { continue; }
    for (var i = j; i < p.seq; i++) {
      let qo = q_off(b, i, h);
      let row = (b * p.heads + h) * p.seq + i;
      let pr = exp(p.scale * dot_qk(qo, ko) - lse[row]);
      let dS = pr * (dot_dov(qo, ko) - Dd[row]);
      for (var t = 0u; t < p.hd; t++) {
        ak[t] += dS * q[qo + t];
        av[t] += pr * dO[qo + t];
      }
    }
  }
  for (var t = 0u; t < p.hd; t++) {
    dk[ko + t] = p.scale * ak[t];
    dv[ko + t] = av[t];
  }
}

@compute @workgroup_size(WG)
fn bwd_dkv(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
           @builtin(num_workgroups) nwg: vec3u) {
  if (p.small == 1u) {
    let rs = row_of(lid, wid, nwg);
    if (rs < p.batch * p.kvHeads * p.seq) { dkv_row(rs); }
    return;
  }
  let r = wid.y * nwg.x + wid.x; // (b·KVH + g)·S + j
  if (r >= p.batch * p.kvHeads * p.seq) { return; } // uniform per workgroup
  let j = r % p.seq;
  let g = (r / p.seq) % p.kvHeads;
  let b = r / (p.seq * p.kvHeads);
  let ko = kv_off(b, j, g);
  for (var t = lid.x; t < p.hd; t += WG) { accK[t] = 0.0; accV[t] = 0.0; }
  for (var h = 0u; h < p.heads; h++) {
    if (kv_head(h) != g) { continue; }
    for (var i = j + lid.x; i < p.seq; i += WG) {
      let qo = q_off(b, i, h);
      let row = (b * p.heads + h) * p.seq + i;
      let pr = exp(p.scale * dot_qk(qo, ko) - lse[row]);
      s[i] = pr; // P_ij
      s2[i] = pr * (dot_dov(qo, ko) - Dd[row]); // dS_ij
    }
    workgroupBarrier();
    for (var t = lid.x; t < p.hd; t += WG) {
      var ak = accK[t];
      var av = accV[t];
      for (var i = j; i < p.seq; i++) {
        let qo = q_off(b, i, h);
        ak += s2[i] * q[qo + t];
        av += s[i] * dO[qo + t];
      }
      accK[t] = ak;
      accV[t] = av;
    }
    workgroupBarrier();
  }
  for (var t = lid.x; t < p.hd; t += WG) {
    dk[ko + t] = p.scale * accK[t];
    dv[ko + t] = accV[t];
  }
}

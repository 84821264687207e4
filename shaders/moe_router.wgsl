// MoE router: per token, the top-k experts and their renormalised gates, and the backward; the
// spec is src/runtime/cpu/moe_router.ts.
// fwd: one thread per token. k passes over the E logits pick the largest not yet picked (strict >,
//      so ties go to the lower expert index; comparing logits, not exp'd probabilities, picks the
//      same experts as the CPU bit for bit), written straight into `experts`; then
//      gates = softmax over the picked logits (= softmax over all, renormalised over the picks).
// bwd: one thread per token: dLogits[t, e_i] = g_i·(dg_i − Σ_j dg_j·g_j), zero for the others.

struct Params { T: u32, E: u32, K: u32, _p0: u32 }

@group(0) @binding(0) var<storage, read> logits: array<f32>; // fwd: [T, E]
@group(0) @binding(1) var<storage, read_write> gates: array<f32>; // fwd out, bwd in: [T, K]
@group(0) @binding(2) var<storage, read_write> experts: array<i32>; // fwd out, bwd in: [T, K]
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> dGates: array<f32>; // bwd in: [T, K]
@group(0) @binding(5) var<storage, read_write> dLogits: array<f32>; // bwd out: [T, E]

override WG: u32 = 64;

fn flat(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

fn picked(out: u32, taken: u32, e: i32) -> bool {
  for (var j = 0u; j < taken; j++) { if (experts[out + j] == e) { return true; } }
  return false;
}

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let t = flat(lid, wid, nwg);
  if (t >= p.T) { return; }
  let row = t * p.E;
  let out = t * p.K;
  for (var i = 0u; i < p.K; i++) {
    var best = -1;
    for (var e = 0; e < i32(p.E); e++) {
      if (picked(out, i, e)) { continue; }
      if (best < 0 || logits[row + u32(e)] > logits[row + u32(best)]) { best = e; }
    }
    experts[out + i] = best;
  }
  let top = logits[row + u32(experts[out])];
  var sum = 0.0;
  for (var i = 0u; i < p.K; i++) { sum += exp(logits[row + u32(experts[out + i])] - top); }
  for (var i = 0u; i < p.K; i++) { gates[out + i] = exp(logits[row + u32(experts[out + i])] - top) / sum; }
}

@compute @workgroup_size(WG)
fn bwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let t = flat(lid, wid, nwg);
  if (t >= p.T) { return; }
  let out = t * p.K;
  var dot = 0.0;
  for (var i = 0u; i < p.K; i++) { dot += dGates[out + i] * gates[out + i]; }
  for (var e = 0u; e < p.E; e++) { dLogits[t * p.E + e] = 0.0; }
  for (var i = 0u; i < p.K; i++) {
    dLogits[t * p.E + u32(experts[out + i])] = gates[out + i] * (dGates[out + i] - dot);
  }
}

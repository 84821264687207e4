// Token embedding forward and backward; the spec is src/runtime/cpu/embedding.ts.
// fwd: one thread per out element, out[t,j] = W[tokens[t] - start, j] (ids outside the table's
//      [start, start + V) give 0: a vocabulary-sharded TP table; unsharded, start = 0 and the CPU
//      reference throws on them).
// bwd: one thread per dWeight element (vocab row v, column j) scanning all tokens in order and
//      summing the rows whose token is v — deterministic, no float atomics, and bit-equal to the
//      CPU reference's ascending-t scatter-add.

struct Params { V: u32, D: u32, T: u32, start: u32 } // start: the first id the table holds

@group(0) @binding(0) var<storage, read> W: array<f32>; // fwd: weight [V,D]
@group(0) @binding(1) var<storage, read> tokens: array<i32>; // [T]
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // fwd: [T,D]
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read> dOut: array<f32>; // bwd: [T,D]
@group(0) @binding(5) var<storage, read_write> dW: array<f32>; // bwd: [V,D]

override WG: u32 = 64;

fn flat(lid: vec3u, wid: vec3u, nwg: vec3u) -> u32 { return (wid.y * nwg.x + wid.x) * WG + lid.x; }

@compute @workgroup_size(WG)
fn fwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.T * p.D) { return; }
  let t = i / p.D;
  let j = i % p.D;
  let v = tokens[t] - i32(p.start);
  var x = 0.0;
  if (v >= 0 && u32(v) < p.V) { x = W[u32(v) * p.D + j]; }
  out[i] = x;
}

@compute @workgroup_size(WG)
fn bwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  if (i >= p.V * p.D) { return; }
  let v = i32(i / p.D + p.start);
  let j = i % p.D;
  var acc = 0.0;
  for (var t = 0u; t < p.T; t++) {
    if (tokens[t] == v) { acc += dOut[t * p.D + j]; }
  }
  dW[i] = acc;
}

// Token embedding forward and backward; the spec is src/runtime/cpu/embedding.ts.
// fwd: one thread per out element, out[t,j] = W[tokens[t] - start, j] (ids outside the table's
//      [start, start + V) give 0: a vocabulary-sharded TP table; unsharded, start = 0 and the CPU
//      reference throws on them).
// bwd: one thread per vocab row v and block of BWD_COLS columns (kernel_constants.ts
//      EMBEDDING_BWD_COLS), scanning the tokens once in order and summing the rows whose token is
//      v — deterministic, no float atomics, and bit-equal to the CPU reference's ascending-t
//      scatter-add (each element's additions in the same order). A thread per element scanned the
//      tokens D times over: 18 ms a step for tiny on lavapipe.

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

const BWD_COLS: u32 = 16u;

@compute @workgroup_size(WG)
fn bwd(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
       @builtin(num_workgroups) nwg: vec3u) {
  let i = flat(lid, wid, nwg);
  let blocks = (p.D + BWD_COLS - 1u) / BWD_COLS;
  if (i >= p.V * blocks) { return; }
  let row = i / blocks;
  let v = i32(row + p.start);
  let j0 = (i % blocks) * BWD_COLS;
  let n = min(BWD_COLS, p.D - j0);
  var acc: array<f32, BWD_COLS>;
  for (var t = 0u; t < p.T; t++) {
    if (tokens[t] == v) {
      for (var c = 0u; c < n; c++) { acc[c] += dOut[t * p.D + j0 + c]; }
    }
  }
  for (var c = 0u; c < n; c++) { dW[row * p.D + j0 + c] = acc[c]; }
}

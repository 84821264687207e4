// Matmul variant 3: adds 4×4 register blocking on top of variant 2's shared-memory tiles.
// A workgroup of WG_X×WG_Y threads computes a BM×BN = (WG_Y·4)×(WG_X·4) block of C; each thread
// keeps a 4×4 accumulator in registers (four vec4 rows) and, per k, reads 4 values of A and 4 of B from
// workgroup memory for 16 FMAs (variant 2 does 1 FMA per 2 shared reads). Tiles are stored
// k-major so the inner loop reads contiguous runs. Global loads walk the unit-stride axis of
// each operand's stored layout (coalesced for every trans form). Follows llm.c matmul kernel 4
// (register tiling), with WebGPU-samples-style override tunables.

struct Params { M: u32, N: u32, K: u32, aM: u32, aK: u32, bK: u32, bN: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

const TM = 4u; // C rows per thread (one vec4 accumulator each)
const TN = 4u; // C cols per thread (the vec4 width)
override WG_X: u32 = 16;
override WG_Y: u32 = 16;
override BK: u32 = 16; // k-depth of a staged tile

var<workgroup> As: array<f32, BK * WG_Y * TM>; // [k][BM]
var<workgroup> Bs: array<f32, BK * WG_X * TN>; // [k][BN]

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let BM = WG_Y * TM;
  let BN = WG_X * TN;
  let threads = WG_X * WG_Y;
  let tid = lid.y * WG_X + lid.x;
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  // 4×4 accumulator as four vec4 rows: fully unrolled, no dynamically indexed private arrays
  // (which some compilers, SwiftShader's among them, lower to slow scratch memory).
  var acc0 = vec4<f32>();
  var acc1 = vec4<f32>();
  var acc2 = vec4<f32>();
  var acc3 = vec4<f32>();
  let aKFast = p.aK == 1u; // A stored [M,K]: k is the unit-stride axis
  let bNFast = p.bN == 1u; // B stored [K,N]: n is the unit-stride axis
  for (var k0 = 0u; k0 < p.K; k0 += BK) {
    for (var i = tid; i < BM * BK; i += threads) {
      var mm = i % BM;
      var kk = i / BM;
      if (aKFast) { mm = i / BK; kk = i % BK; }
      let gm = m0 + mm;
      let gk = k0 + kk;
      var v = 0.0;
      if (gm < p.M && gk < p.K) { v = A[gm * p.aM + gk * p.aK]; }
      As[kk * BM + mm] = v;
    }
    for (var i = tid; i < BK * BN; i += threads) {
      var nn = i / BK;
      var kk = i % BK;
      if (bNFast) { nn = i % BN; kk = i / BN; }
      let gn = n0 + nn;
      let gk = k0 + kk;
      var v = 0.0;
      if (gn < p.N && gk < p.K) { v = B[gk * p.bK + gn * p.bN]; }
      Bs[kk * BN + nn] = v;
    }
    workgroupBarrier();
    let am = lid.y * TM;
    let bn = lid.x * TN;
    for (var kk = 0u; kk < BK; kk++) {
      let a = vec4<f32>(As[kk * BM + am], As[kk * BM + am + 1u], As[kk * BM + am + 2u], As[kk * BM + am + 3u]);
      let b = vec4<f32>(Bs[kk * BN + bn], Bs[kk * BN + bn + 1u], Bs[kk * BN + bn + 2u], Bs[kk * BN + bn + 3u]);
      acc0 = fma(vec4<f32>(a.x), b, acc0);
      acc1 = fma(vec4<f32>(a.y), b, acc1);
      acc2 = fma(vec4<f32>(a.z), b, acc2);
      acc3 = fma(vec4<f32>(a.w), b, acc3);
    }
    workgroupBarrier();
  }
  let row0 = m0 + lid.y * TM;
  let col0 = n0 + lid.x * TN;
  store_row(row0, col0, acc0);
  store_row(row0 + 1u, col0, acc1);
  store_row(row0 + 2u, col0, acc2);
  store_row(row0 + 3u, col0, acc3);
}

fn store_row(row: u32, col0: u32, v: vec4<f32>) {
  if (row >= p.M) { return; }
  let base = row * p.N + col0;
  if (col0 + 3u < p.N) {
    C[base] = v.x; C[base + 1u] = v.y; C[base + 2u] = v.z; C[base + 3u] = v.w;
    return;
  }
  if (col0 < p.N) { C[base] = v.x; }
  if (col0 + 1u < p.N) { C[base + 1u] = v.y; }
  if (col0 + 2u < p.N) { C[base + 2u] = v.z; }
}

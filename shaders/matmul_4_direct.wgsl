// Matmul variant 4: drops variant 3's workgroup-memory staging and barriers and doubles its register
// block to 8×8 per thread, reading op(A) and op(B) straight from storage. On CPU-backed adapters
// (SwiftShader, lavapipe: what headless CI has) workgroup memory is just another copy in the same
// caches and every workgroupBarrier switches all invocations, so staging costs more than it saves;
// an 8×8 block does 64 FMAs per 16 loads (variant 3: 16 per 8 shared reads plus the staging).
// On a discrete GPU variant 3 (or a subgroup kernel) should win: this one leans on L1/L2.
// A workgroup of WG_X×WG_Y threads computes a (WG_Y·8)×(WG_X·8) block of C. Reads clamp to the
// last row/column and stores are masked, so any M, N, K ≥ 1 works; strides fold the trans forms.
// Accumulators are sixteen named vec4s: no dynamically indexed private array (SwiftShader lowers
// those to scratch memory, see variant 3).

struct Params { M: u32, N: u32, K: u32, aM: u32, aK: u32, bK: u32, bN: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

override WG_X: u32 = 8;
override WG_Y: u32 = 8;

@compute @workgroup_size(WG_X, WG_Y)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let m0 = gid.y * 8u; // first C row of this thread
  let n0 = gid.x * 8u; // first C col of this thread
  let lastN = vec4u(p.N - 1u);
  let cl = min(vec4u(n0, n0 + 1u, n0 + 2u, n0 + 3u), lastN) * p.bN; // B offsets of cols 0..3
  let ch = min(vec4u(n0 + 4u, n0 + 5u, n0 + 6u, n0 + 7u), lastN) * p.bN; // cols 4..7
  let lastM = vec4u(p.M - 1u);
  let rl = min(vec4u(m0, m0 + 1u, m0 + 2u, m0 + 3u), lastM) * p.aM; // A offsets of rows 0..3
  let rh = min(vec4u(m0 + 4u, m0 + 5u, m0 + 6u, m0 + 7u), lastM) * p.aM; // rows 4..7
  // row i of the 8×8 block: lo_i holds cols 0..3, hi_i cols 4..7
  var lo0 = vec4<f32>(); var hi0 = vec4<f32>();
  var lo1 = vec4<f32>(); var hi1 = vec4<f32>();
  var lo2 = vec4<f32>(); var hi2 = vec4<f32>();
  var lo3 = vec4<f32>(); var hi3 = vec4<f32>();
  var lo4 = vec4<f32>(); var hi4 = vec4<f32>();
  var lo5 = vec4<f32>(); var hi5 = vec4<f32>();
  var lo6 = vec4<f32>(); var hi6 = vec4<f32>();
  var lo7 = vec4<f32>(); var hi7 = vec4<f32>();
  for (var k = 0u; k < p.K; k++) {
    let kb = k * p.bK;
    let ka = k * p.aK;
    let bl = vec4<f32>(B[kb + cl.x], B[kb + cl.y], B[kb + cl.z], B[kb + cl.w]);
    let bh = vec4<f32>(B[kb + ch.x], B[kb + ch.y], B[kb + ch.z], B[kb + ch.w]);
    var a = vec4<f32>(A[rl.x + ka]); lo0 = fma(a, bl, lo0); hi0 = fma(a, bh, hi0);
    a = vec4<f32>(A[rl.y + ka]); lo1 = fma(a, bl, lo1); hi1 = fma(a, bh, hi1);
    a = vec4<f32>(A[rl.z + ka]); lo2 = fma(a, bl, lo2); hi2 = fma(a, bh, hi2);
    a = vec4<f32>(A[rl.w + ka]); lo3 = fma(a, bl, lo3); hi3 = fma(a, bh, hi3);
    a = vec4<f32>(A[rh.x + ka]); lo4 = fma(a, bl, lo4); hi4 = fma(a, bh, hi4);
    a = vec4<f32>(A[rh.y + ka]); lo5 = fma(a, bl, lo5); hi5 = fma(a, bh, hi5);
    a = vec4<f32>(A[rh.z + ka]); lo6 = fma(a, bl, lo6); hi6 = fma(a, bh, hi6);
    a = vec4<f32>(A[rh.w + ka]); lo7 = fma(a, bl, lo7); hi7 = fma(a, bh, hi7);
  }
  store_row(m0, n0, lo0, hi0);
  store_row(m0 + 1u, n0, lo1, hi1);
  store_row(m0 + 2u, n0, lo2, hi2);
  store_row(m0 + 3u, n0, lo3, hi3);
  store_row(m0 + 4u, n0, lo4, hi4);
  store_row(m0 + 5u, n0, lo5, hi5);
  store_row(m0 + 6u, n0, lo6, hi6);
  store_row(m0 + 7u, n0, lo7, hi7);
}

fn store4(row: u32, col0: u32, v: vec4<f32>) {
  let base = row * p.N + col0;
  if (col0 + 3u < p.N) {
    C[base] = v.x; C[base + 1u] = v.y; C[base + 2u] = v.z; C[base + 3u] = v.w;
    return;
  }
  if (col0 < p.N) { C[base] = v.x; }
  if (col0 + 1u < p.N) { C[base + 1u] = v.y; }
  if (col0 + 2u < p.N) { C[base + 2u] = v.z; }
}

fn store_row(row: u32, col0: u32, lo: vec4<f32>, hi: vec4<f32>) {
  if (row >= p.M) { return; }
  store4(row, col0, lo);
  store4(row, col0 + 4u, hi);
}

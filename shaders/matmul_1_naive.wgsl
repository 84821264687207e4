// Matmul variant 1 (naive, kept as the baseline): one thread per C element, K-loop straight
// from global memory. C[M,N] = op(A)[M,K] · op(B)[K,N]; the trans forms are folded into
// element strides (A[m,k] = A[m·aM + k·aK], B[k,n] = B[k·bK + n·bN]), so there is no branch.
// Follows llm.c matmul_forward kernel 1. Host: src/runtime/gpu/matmul.ts.

struct Params { M: u32, N: u32, K: u32, aM: u32, aK: u32, bK: u32, bN: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 8; // workgroup is WG×WG threads, one per C element

@compute @workgroup_size(WG, WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let n = gid.x;
  let m = gid.y;
  if (m >= p.M || n >= p.N) { return; }
  var acc = 0.0;
  for (var k = 0u; k < p.K; k++) {
    acc += A[m * p.aM + k * p.aK] * B[k * p.bK + n * p.bN];
  }
  C[m * p.N + n] = acc;
}

// Matmul variant 2: adds TILE×TILE shared-memory tiles. Each workgroup stages a TILE-wide slab
// of op(A) and op(B) in workgroup memory, so each global element is read M/TILE (not M) times.
// Edges (sizes not multiples of TILE) load zeros. Strides fold the trans forms as in variant 1.

struct Params { M: u32, N: u32, K: u32, aM: u32, aK: u32, bK: u32, bN: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

override TILE: u32 = 16; // workgroup is TILE×TILE threads (TILE² ≤ maxComputeInvocationsPerWorkgroup)

var<workgroup> As: array<f32, TILE * TILE>; // [row][k]
var<workgroup> Bs: array<f32, TILE * TILE>; // [k][col]

@compute @workgroup_size(TILE, TILE)
fn main(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u) {
  let row = wid.y * TILE + lid.y;
  let col = wid.x * TILE + lid.x;
  var acc = 0.0;
  let tiles = (p.K + TILE - 1u) / TILE;
  for (var t = 0u; t < tiles; t++) {
    let ka = t * TILE + lid.x;
    var a = 0.0;
    if (row < p.M && ka < p.K) { a = A[row * p.aM + ka * p.aK]; }
    As[lid.y * TILE + lid.x] = a;
    let kb = t * TILE + lid.y;
    var b = 0.0;
    if (kb < p.K && col < p.N) { b = B[kb * p.bK + col * p.bN]; }
    Bs[lid.y * TILE + lid.x] = b;
    workgroupBarrier();
    for (var k = 0u; k < TILE; k++) {
      acc += As[lid.y * TILE + k] * Bs[k * TILE + lid.x];
    }
    workgroupBarrier();
  }
  if (row < p.M && col < p.N) { C[row * p.N + col] = acc; }
}

// AdamW (decoupled weight decay) on one shard; the spec is src/runtime/cpu/adamw.ts.
// The bias corrections bc1 = 1−β1ᵗ, bc2 = 1−β2ᵗ come from the host (fp64, 1-based t).

struct Params { n: u32, lr: f32, beta1: f32, beta2: f32, eps: f32, weightDecay: f32, bc1: f32, bc2: f32 }

@group(0) @binding(0) var<storage, read> P: array<f32>;
@group(0) @binding(1) var<storage, read> G: array<f32>;
@group(0) @binding(2) var<storage, read> Mo: array<f32>;
@group(0) @binding(3) var<storage, read> Vo: array<f32>;
@group(0) @binding(4) var<storage, read_write> Pn: array<f32>;
@group(0) @binding(5) var<storage, read_write> Mn: array<f32>;
@group(0) @binding(6) var<storage, read_write> Vn: array<f32>;
@group(0) @binding(7) var<uniform> p: Params;

override WG: u32 = 64;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_id) lid: vec3u, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) nwg: vec3u) {
  let i = (wid.y * nwg.x + wid.x) * WG + lid.x;
  if (i >= p.n) { return; }
  let g = G[i];
  let m = p.beta1 * Mo[i] + (1.0 - p.beta1) * g;
  let v = p.beta2 * Vo[i] + (1.0 - p.beta2) * g * g;
  let mhat = m / p.bc1;
  let vhat = v / p.bc2;
  Pn[i] = P[i] - p.lr * (mhat / (sqrt(vhat) + p.eps) + p.weightDecay * P[i]);
  Mn[i] = m;
  Vn[i] = v;
}

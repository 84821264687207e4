// CPU reference elementwise add (the spec for shaders/add.wgsl): c = a + b.
import type { FArr } from './cpu_types';

export function add(a: FArr, b: FArr, c: FArr, n: number): void {
  for (let i = 0; i < n; i++) c[i] = a[i] + b[i];
}

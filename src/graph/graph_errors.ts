// Errors of the graph layer: a malformed step graph, reported at the first bad node.

import { FsdpSimError } from '../errors';

/** The verifier or the toposort found a bad node; names its index, kind and inputs. */
export class GraphError extends FsdpSimError {
  constructor(
    message: string,
    readonly index?: number,
    readonly nodeName?: string,
    readonly kind?: string,
    readonly inputs?: readonly string[],
  ) {
    super('graph', message);
  }
}

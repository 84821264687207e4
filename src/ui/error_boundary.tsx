// Error boundary: a render error in one panel shows a message there with a way back; the rest
// of the page keeps working.

import { Component, type ReactNode } from 'react';

interface Props {
  readonly name: string;
  readonly children: ReactNode;
}

interface State {
  readonly error: Error | null;
}

export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override render(): ReactNode {
    if (!this.state.error) return this.props.children;
    return (
      <div className="banner error" role="alert" data-testid="boundary-error">
        {this.props.name} failed to render: {this.state.error.message}
        <button type="button" onClick={() => this.setState({ error: null })}>
          Retry
        </button>
      </div>
    );
  }
}
